import { JsonPatchOp, jsonPatch } from './json-patch.util';

/** The most per-key diffs a report carries. */
export const DIFF_SAMPLE = 20;

/** The first event of one type the candidate failed on, and why (extra fields of the host's error passed through). */
export interface FailedEvent {
  eventId: string;
  position: number;
  aggregateId: string;
  /** The state key the event was applied under (projections; a reducer's is the aggregate id). */
  key: string | null;
  code: string;
  message: string;
  [extra: string]: unknown;
}

export interface FailureGroup {
  eventType: string;
  count: number;
  first: FailedEvent;
}

/** Failures grouped by event type, each with its first failing event, in the order the types first failed. */
export class FailureBook {
  private readonly groups = new Map<string, FailureGroup>();

  record(eventType: string, event: FailedEvent): void {
    const g = this.groups.get(eventType);
    if (g) g.count++;
    else this.groups.set(eventType, { eventType, count: 1, first: event });
  }

  get size(): number {
    return this.groups.size;
  }

  list(): FailureGroup[] {
    return [...this.groups.values()];
  }
}

export type KeyChange = 'added' | 'removed' | 'changed';

export interface KeyDiff {
  key: string;
  change: KeyChange;
  /** RFC 6902 JSON Patch from the live state to the candidate's (added: one `add` of the whole state at ""; removed: a `remove` of ""). */
  patch: JsonPatchOp[];
}

export interface KeyCounts {
  added: number;
  removed: number;
  changed: number;
  unchanged: number;
  /** Keys the candidate failed on (its lane would be held): not compared. */
  held: number;
}

export interface Comparison {
  keys: KeyCounts;
  diffs: KeyDiff[];
}

/**
 * The candidate's states against the live ones (both JSON text, key → state). A key is unchanged when
 * the texts are equal (System.Text.Json writes the same text for the same state); a changed key's diff
 * is computed on the parsed values. `countRemoved`: the run saw the whole history for every key, so a
 * live key the candidate never made is one it would not have; on a partial run (a position range, a
 * sample of keys, truncated) only the keys the candidate touched are compared. The diff sample is the
 * first DIFF_SAMPLE differing keys in key order.
 */
export function compareStates(
  candidate: ReadonlyMap<string, string>,
  live: ReadonlyMap<string, string>,
  opts: { countRemoved: boolean; held: ReadonlySet<string> },
): Comparison {
  const keys: KeyCounts = { added: 0, removed: 0, changed: 0, unchanged: 0, held: opts.held.size };
  const differing: { key: string; change: KeyChange }[] = [];
  for (const [key, state] of candidate) {
    if (opts.held.has(key)) continue;
    const before = live.get(key);
    if (before === undefined) differing.push({ key, change: 'added' });
    else if (before === state) keys.unchanged++;
    else differing.push({ key, change: 'changed' });
  }
  if (opts.countRemoved)
    for (const key of live.keys()) if (!candidate.has(key) && !opts.held.has(key)) differing.push({ key, change: 'removed' });
  for (const d of differing) keys[d.change]++;
  differing.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const diffs = differing.slice(0, DIFF_SAMPLE).map(({ key, change }): KeyDiff => {
    if (change === 'added') return { key, change, patch: [{ op: 'add', path: '', value: JSON.parse(candidate.get(key)!) }] };
    if (change === 'removed') return { key, change, patch: [{ op: 'remove', path: '' }] };
    return { key, change, patch: jsonPatch(JSON.parse(live.get(key)!), JSON.parse(candidate.get(key)!)) };
  });
  return { keys, diffs };
}
