import { rawJsonOrNull } from '../common/raw-json';
import { StoredEvent } from '../store/event-log.port';
import { REMOVED_STATE as REMOVED } from '../store/notification-repository.port';
import { ApplyGroupPayload, ItemError } from '../tenant-code/host/runtime-protocol';
import { TenantCode } from '../tenant-code/tenant-code.port';
import { toWireEvent } from '../tenant-code/wire-event';
import { FailureBook } from './dry-run-report';

/** Why a run stopped before the end of its range (`truncated: true`). */
export type StopReason = 'maxEvents' | 'maxKeys' | 'maxStateBytes' | 'maxDurationMs';

/** An event for one key (a projection's event may be routed to several). */
export interface Routed {
  key: string;
  event: StoredEvent;
}

/** Groups per host call: one page's keys go in a few calls, never one giant line. */
const GROUPS_PER_CALL = 100;

/**
 * One version's states folded in memory, key by key in log order, with the tenant's code (through
 * TenantCode, the same apply path the lanes use, as background calls: a tenant's dry run waits
 * behind its own appends' reducers): never the lanes' tables, nothing notified. A key whose event
 * fails is held, as its lane would be: its later events are not applied, the failure is recorded
 * with the event. Bounded: `maxKeys` states and `maxStateBytes` of their text at most (the run
 * stops with that reason before passing either).
 */
export class StateFold {
  readonly states = new Map<string, string>();
  readonly held = new Set<string>();
  /** Keys whose state the candidate removed (IDeletableProjection: the host answers the text `null`). */
  readonly removed = new Set<string>();
  eventsApplied = 0;
  private bytes = 0;

  /** Keys met so far (held ones included). */
  get keysSeen(): number {
    let heldOnly = 0;
    for (const k of this.held) if (!this.states.has(k)) heldOnly++;
    return this.states.size + heldOnly;
  }

  constructor(
    private readonly code: TenantCode,
    private readonly tenantId: string,
    private readonly assemblyId: string,
    private readonly className: string,
    private readonly limits: { maxKeys: number; maxStateBytes: number },
    /** Where failures go (undefined: not reported, e.g. the live reducer's baseline fold). */
    private readonly failures?: FailureBook,
  ) {}

  /** Applies one page's events; a limit reached stops it before anything of the page is applied. */
  async apply(routed: Routed[]): Promise<StopReason | null> {
    const byKey = new Map<string, StoredEvent[]>();
    for (const { key, event } of routed) {
      if (this.held.has(key)) continue;
      const list = byKey.get(key);
      if (list) list.push(event);
      else byKey.set(key, [event]);
    }
    let fresh = 0;
    for (const key of byKey.keys()) if (!this.states.has(key)) fresh++;
    if (this.states.size + fresh > this.limits.maxKeys) return 'maxKeys';
    const keys = [...byKey.keys()];
    for (let i = 0; i < keys.length; i += GROUPS_PER_CALL) {
      const chunk = keys.slice(i, i + GROUPS_PER_CALL);
      await this.applyChunk(chunk.map((key) => ({ key, events: byKey.get(key)! })));
      if (this.bytes > this.limits.maxStateBytes) return 'maxStateBytes';
    }
    return null;
  }

  private async applyChunk(work: { key: string; events: StoredEvent[] }[]): Promise<void> {
    while (work.length > 0) {
      const groups: ApplyGroupPayload[] = work.map(({ key, events }) => ({
        state: rawJsonOrNull(this.states.get(key) ?? null),
        events: events.map(toWireEvent),
        key,
      }));
      const results = await this.code.apply(this.tenantId, this.assemblyId, this.className, groups);
      const rest: { key: string; events: StoredEvent[] }[] = [];
      results.forEach((r, i) => {
        const { key, events } = work[i];
        const applied = r.ok ? r.states.length : r.failedIndex;
        if (applied > 0) this.set(key, r.states[applied - 1]);
        this.eventsApplied += applied;
        if (!r.ok) this.fail(key, events[r.failedIndex], r.error);
        // The host's answer reached its size budget: the rest of this key's events go again.
        else if (r.truncated && applied < events.length) rest.push({ key, events: events.slice(applied) });
      });
      work = rest;
    }
  }

  private set(key: string, state: string): void {
    this.bytes += (state === REMOVED ? 0 : state.length) - (this.states.get(key)?.length ?? 0);
    // A removal leaves no state: the key's next event starts from a new one, as on the lanes.
    if (state === REMOVED) {
      this.states.delete(key);
      this.removed.add(key);
      return;
    }
    this.removed.delete(key);
    this.states.set(key, state);
  }

  private fail(key: string, e: StoredEvent, error: ItemError): void {
    this.held.add(key);
    // The host's own frames are not the tenant's to see; fields the host adds (exception type, the tenant's frames) pass through.
    const { stackTrace: _host, code, message, ...extra } = error;
    this.failures?.record(e.eventType, {
      ...extra,
      eventId: e.eventId,
      position: e.position,
      aggregateId: e.aggregateId,
      key,
      code,
      message,
    });
  }
}
