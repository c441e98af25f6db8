import { LruMap } from '../common/lru-map';
import { LaneInbox } from '../store/lanes/lane-inbox.port';
import { InboxItem } from '../store/lanes/lane-records';
// Where a key past the limit goes: the version's held lane of unresolvable events.
import { UNRESOLVED_KEY } from './state-key-rule';

/** The tenant's `keysPerProjection` limit (src/quotas); 0 is no limit. */
export interface KeyLimitSource {
  keysPerProjection(tenantId: string): Promise<number>;
}

/** How long a version's counted keys are trusted before they are counted again (other instances add keys too). */
const RECOUNT_MS = 5_000;

export interface CappedItems {
  items: InboxItem[];
  /** Why events were moved to `!unresolved` (the held lane's error), and the first of them; null if none was. */
  refused: { error: string; position: number } | null;
}

/**
 * The `keysPerProjection` limit on routing: an event whose key would be a new lane past the
 * version's limit goes to `!unresolved` instead, held with a KEY_LIMIT error, so one projection
 * cannot fill the store with lane rows (a ResolveKey that gives a new key per event).
 *
 * Cheap far from the limit: a version's key count is read from the store at most every 5 s and
 * raised meanwhile by each batch's distinct keys (an upper bound); only a batch that could pass
 * the limit asks the store which of its keys are new and counts again. A key its projection removed
 * (IDeletableProjection) is not counted by the store and is new again (LaneInbox.keyCount): a cached
 * count is then above the store's, which only sends a batch to the exact count sooner.
 */
export class LaneKeyCap {
  private readonly counts = new LruMap<string, { count: number; at: number }>(10_000);

  constructor(
    private readonly repo: Pick<LaneInbox, 'existingKeys' | 'keyCount'>,
    private readonly limits: KeyLimitSource,
    private readonly now: () => number = Date.now,
  ) {}

  async admit(tenantId: string, versionId: string, items: InboxItem[]): Promise<CappedItems> {
    const limit = await this.limits.keysPerProjection(tenantId);
    if (limit === 0 || items.length === 0) return { items, refused: null };
    const keys = [...new Set(items.map((i) => i.key))].filter((k) => k !== UNRESOLVED_KEY);
    const id = `${tenantId}\u0000${versionId}`;
    let known = this.counts.get(id);
    if (!known || this.now() - known.at > RECOUNT_MS) {
      known = { count: await this.repo.keyCount({ tenantId, versionId }), at: this.now() };
      this.counts.set(id, known);
    }
    if (known.count + keys.length <= limit) {
      known.count += keys.length;
      return { items, refused: null };
    }
    // Near the limit: exactly which keys are new, against an exact count.
    const existing = await this.repo.existingKeys({ tenantId, versionId }, keys);
    let count = await this.repo.keyCount({ tenantId, versionId });
    const refusedKeys = new Set<string>();
    for (const k of keys) {
      if (existing.has(k)) continue;
      if (count < limit) count++;
      else refusedKeys.add(k);
    }
    this.counts.set(id, { count, at: this.now() });
    if (refusedKeys.size === 0) return { items, refused: null };
    const out = items.map((i) => (refusedKeys.has(i.key) ? { key: UNRESOLVED_KEY, position: i.position } : i));
    const first = items.find((i) => refusedKeys.has(i.key))!;
    return {
      items: out,
      refused: {
        position: first.position,
        error:
          `KEY_LIMIT: the projection already has ${limit} state keys, its tenant's keysPerProjection limit; ` +
          `events for new keys wait here: raise the limit and retry this lane, or skip them`,
      },
    };
  }
}
