import {
  aggregateErased,
  appendConditionFailed,
  aggregateTypeMismatch,
  DomainError,
  idempotencyKeyReused,
  reservedName,
  versionConflict,
} from '../common/domain-error';
import { uuidv7 } from '../common/uuid-v7';
import { AppendOutcome, AppendRequest, AppendResult, EventQuery, Snapshot, StoredEvent, StreamInfo } from './event-log.port';

export const streamKey = (tenantId: string, aggregateId: string): string => `${tenantId}\u0000${aggregateId}`;

/** An idempotency key of a tenant (the store's primary key, as one string). */
export const idempotencyKeyOf = (tenantId: string, key: string): string => `${tenantId}\u0000${key}`;

/** A key the store remembers (not expired): the request it answered and the events that request stored. */
export interface RememberedKey {
  requestHash: string;
  outcome: string | null;
  /** In position order; never empty. A transaction's key: all its events, of every aggregate. */
  events: StoredEvent[];
}

/** A key the commit remembers, with the positions of the events its request stored. */
export interface KeyWrite {
  tenantId: string;
  key: string;
  requestHash: string;
  firstPosition: number;
  lastPosition: number;
  outcome: string | null;
  createdAt: number;
}

export interface EventRow extends StoredEvent {
  tenantId: string;
}

export interface StreamWrite {
  tenantId: string;
  aggregateId: string;
  aggregateType: string;
  version: number;
}

/** A snapshot the commit writes, with the tenant it belongs to. */
export interface SnapshotWrite extends Snapshot {
  tenantId: string;
}

export interface AppendPlan {
  outcomes: AppendOutcome[];
  /** Snapshots of the accepted requests that carried one (the last per aggregate wins). */
  snapshots: SnapshotWrite[];
  rows: EventRow[];
  /** Final version of every stream the plan touches. */
  streams: StreamWrite[];
  /** Final head position of every tenant the plan touches. */
  heads: Map<string, number>;
  /** Idempotency keys of the accepted requests that carried one. */
  keys: KeyWrite[];
}

/**
 * The one rule for an append's aggregate type, for the group commit and for the reducer path alike:
 * a stream's type is fixed by its first append, so the stored type holds; a new stream takes the
 * given type, else the one inferred from its id. A given type other than the stored one is refused.
 */
export function decideAggregateType(
  req: Pick<AppendRequest, 'aggregateType' | 'inferredType'>,
  stored: string | undefined,
): string | DomainError {
  if (stored !== undefined && req.aggregateType !== undefined && req.aggregateType !== stored)
    return aggregateTypeMismatch(req.aggregateType, stored);
  return stored ?? req.aggregateType ?? req.inferredType;
}

/** The trace context fields of an append's events: present only when sent (StoredEvent's rule). */
function traceOf(req: AppendRequest): Pick<StoredEvent, 'traceParent' | 'traceState'> {
  if (!req.traceParent) return {};
  return req.traceState ? { traceParent: req.traceParent, traceState: req.traceState } : { traceParent: req.traceParent };
}

/**
 * The part of a group commit that is the same on every store: given the current versions and
 * head positions (read under the transaction's locks), decide each request on its own, in
 * arrival order, and number what is accepted. Pure, so the adapters only do I/O.
 *
 * A multi-aggregate transaction (its requests contiguous, each with the same `transaction`) is
 * decided as one: every member's checks pass, or none of it is stored and every member answers the
 * first failure. `conditionHits` (by request index; a transaction's: its first member's) is, for
 * each request with a condition, the first stored position after its `after` matching its query,
 * read by the adapter inside the commit, under the tenant's head lock (absent: none); events
 * accepted earlier in this plan are checked here. Heads must be the real ones when a request has a
 * condition: the error names a real position.
 */
export function planAppends(
  requests: AppendRequest[],
  current: Map<string, StreamInfo>,
  heads: Map<string, number>,
  now: number,
  remembered: Map<string, RememberedKey> = new Map(),
  conditionHits: Map<number, number> = new Map(),
): AppendPlan {
  const streams = new Map<string, StreamWrite>();
  // Keys accepted earlier in this plan: a second request with one of them (two retries in one group
  // commit) is answered like a request whose key the store already had.
  const answered = new Map<string, Answered>();
  const keys: KeyWrite[] = [];
  const snapshots = new Map<string, SnapshotWrite>();
  const nextHeads = new Map(heads);
  const rows: EventRow[] = [];
  const outcomes: AppendOutcome[] = [];

  for (let i = 0; i < requests.length;) {
    const at = i;
    const size = groupLength(requests, at);
    const group = groupAt(requests, at, size);
    const first = requests[at];
    i += size;
    if (typeof group === 'string') {
      const error = new DomainError('INTERNAL', group);
      for (let n = 0; n < size; n++) outcomes.push({ ok: false, error });
      continue;
    }
    const tx = group.length > 1 || first.transaction !== undefined;
    // Before any check of versions: a replay answers what was stored, whatever the streams are now.
    const replay = first.idempotency && replayOf(first, first.idempotency.key, answered, remembered);
    if (replay) {
      for (const member of group) outcomes.push(replay(member));
      continue;
    }
    // Checks first, on a view of the versions as the group's own earlier members leave them; nothing is planned until all pass.
    const view = new Map<string, StreamInfo>();
    const decided: { key: string; aggregateType: string; version: number }[] = [];
    let failure: DomainError | undefined;
    for (const req of group) {
      const key = streamKey(req.tenantId, req.aggregateId);
      const d = decide(req, view.get(key) ?? streams.get(key) ?? current.get(key), current.get(key)?.erasedAt);
      if (d instanceof DomainError) {
        failure = tx ? withAggregate(d, req.aggregateId) : d;
        break;
      }
      decided.push({ key, ...d });
      view.set(key, { aggregateType: d.aggregateType, version: d.version + req.events.length });
    }
    if (!failure && first.condition) failure = conditionFailure(first, conditionHits.get(at), rows);
    if (!failure) {
      for (let m = 0; m < group.length && !failure; m++) {
        const late = lateCheck(group[m], decided[m].version);
        if (late) failure = tx ? withAggregate(late, group[m].aggregateId) : late;
      }
    }
    if (failure) {
      for (let n = 0; n < group.length; n++) outcomes.push({ ok: false, error: failure });
      continue;
    }
    const results: AppendResult[] = [];
    const stored: StoredEvent[] = [];
    for (let m = 0; m < group.length; m++) {
      const req = group[m];
      const { key, aggregateType, version } = decided[m];
      let position = nextHeads.get(req.tenantId) ?? 0;
      const events: StoredEvent[] = [];
      let v = version;
      for (const e of req.events) {
        const row: EventRow = {
          tenantId: req.tenantId,
          position: ++position,
          eventId: e.eventId ?? uuidv7(now),
          aggregateId: req.aggregateId,
          aggregateType,
          eventType: e.eventType,
          version: ++v,
          timestamp: req.timestamp ?? now,
          data: e.data,
          metadata: req.metadata ?? null,
          correlationId: req.correlationId ?? null,
          causationId: req.causationId ?? null,
          ...traceOf(req),
          ...(e.tags && e.tags.length > 0 ? { tags: [...e.tags] } : {}),
        };
        rows.push(row);
        events.push(row);
      }
      nextHeads.set(req.tenantId, position);
      streams.set(key, { tenantId: req.tenantId, aggregateId: req.aggregateId, aggregateType, version: v });
      if (req.snapshot) {
        const sn = req.snapshot;
        snapshots.set(key, {
          tenantId: req.tenantId,
          aggregateId: req.aggregateId,
          aggregateType,
          bindingId: sn.bindingId,
          version: v,
          state: sn.state,
          failedVersion: sn.failedVersion ?? null,
          error: sn.error ?? null,
          updatedAt: req.timestamp ?? now,
        });
      }
      const result: AppendResult = { aggregateId: req.aggregateId, aggregateType, events };
      results.push(result);
      stored.push(...events);
      outcomes.push({ ok: true, result });
    }
    if (first.idempotency && stored.length > 0) {
      const idem = first.idempotency;
      const outcome = idem.outcome ?? null;
      // A transaction's key spans all its events (first..last position: they are contiguous).
      keys.push({
        tenantId: first.tenantId,
        key: idem.key,
        requestHash: idem.requestHash,
        firstPosition: stored[0].position,
        lastPosition: stored[stored.length - 1].position,
        outcome,
        createdAt: now,
      });
      // A lone request's replay answers its very events array (the same objects: see replayOf).
      const events = results.length === 1 ? results[0].events : stored;
      answered.set(idempotencyKeyOf(first.tenantId, idem.key), { requestHash: idem.requestHash, outcome, events });
    }
  }
  const touchedHeads = new Map<string, number>();
  for (const [tenantId, pos] of nextHeads) if (pos !== heads.get(tenantId)) touchedHeads.set(tenantId, pos);
  return { outcomes, rows, streams: [...streams.values()], heads: touchedHeads, snapshots: [...snapshots.values()], keys };
}

/** The checks before a condition: type, erasure, reserved names, expectedVersion (in that order). */
function decide(
  req: AppendRequest,
  known: StreamInfo | undefined,
  erasedAt: number | undefined,
): DomainError | { aggregateType: string; version: number } {
  const version = known?.version ?? 0;
  const aggregateType = decideAggregateType(req, known?.aggregateType);
  if (aggregateType instanceof DomainError) return aggregateType;
  // Erased: refused whatever else the request says (read under the commit's lock: see erasure-schema.ts).
  if (erasedAt !== undefined) return aggregateErased(req.aggregateId, erasedAt);
  // The service's own streams ($system, $erasures) take no appends from tenants: no '$' type, and no
  // '$' id either (else a tenant could take $erasures before the first erasure writes to it).
  if (aggregateType.startsWith('$') || req.aggregateId.startsWith('$')) {
    const [field, value] = aggregateType.startsWith('$') ? ['aggregateType', aggregateType] : ['aggregateId', req.aggregateId];
    return reservedName(field, value);
  }
  if (req.expectedVersion !== undefined && req.expectedVersion !== version) return versionConflict(req.expectedVersion, version);
  return { aggregateType, version };
}

/** The checks after a condition: a stale snapshot base, then the reducer's refusal (computed on this very version). */
function lateCheck(req: AppendRequest, version: number): DomainError | undefined {
  if (req.snapshot && req.snapshot.baseVersion !== version) {
    return new DomainError('STATE_STALE', 'the aggregate moved on while its state was computed', { actualVersion: version });
  }
  if (req.refusal) return new DomainError(req.refusal.code, req.refusal.message, req.refusal.details);
  return undefined;
}

/**
 * The condition of `req` against the log: `hit` (the store's first match after `after`) or else the
 * first event accepted earlier in this plan, of the same tenant, after `after`, matching its query.
 */
function conditionFailure(req: AppendRequest, hit: number | undefined, planned: EventRow[]): DomainError | undefined {
  const { failIfEventsMatch: query, after } = req.condition!;
  if (hit !== undefined) return appendConditionFailed(hit, after);
  const match = planned.find((r) => r.tenantId === req.tenantId && r.position > (after ?? 0) && matchesQuery(query, r));
  return match ? appendConditionFailed(match.position, after) : undefined;
}

/** Whether an event matches a DCB query: any item whose types (if any) include its type and whose tags (if any) it all has. */
export function matchesQuery(query: EventQuery, e: Pick<StoredEvent, 'eventType' | 'tags'>): boolean {
  return query.items.some(
    (item) =>
      (item.types === undefined || item.types.length === 0 || item.types.includes(e.eventType)) &&
      (item.tags ?? []).every((t) => e.tags?.includes(t) === true),
  );
}

/** A transaction member's failure names the member (details.aggregateId), unless it already does. */
function withAggregate(e: DomainError, aggregateId: string): DomainError {
  if ('aggregateId' in e.details) return e;
  return new DomainError(e.code, e.message, { ...e.details, aggregateId });
}

/**
 * The requests decided as one at `i`: a lone request, or its transaction's members (contiguous, as
 * many as its `size`, one tenant). A malformed transaction (split by the caller, interleaved) is a
 * bug upstream: its members are answered INTERNAL and nothing of it is stored (the string says why).
 */
function groupAt(requests: AppendRequest[], i: number, n: number): AppendRequest[] | string {
  const first = requests[i];
  if (!first.transaction) return [first];
  const members = requests.slice(i, i + n);
  if (n !== first.transaction.size)
    return `transaction ${first.transaction.id} arrived with ${n} of its ${first.transaction.size} requests`;
  if (members.some((m) => m.tenantId !== first.tenantId)) return `transaction ${first.transaction.id} spans tenants`;
  return members;
}

/** How many contiguous requests from `i` carry the same transaction id as requests[i] (1 for a lone request). */
function groupLength(requests: AppendRequest[], i: number): number {
  const id = requests[i].transaction?.id;
  if (id === undefined) return 1;
  let n = 1;
  while (i + n < requests.length && requests[i + n].transaction?.id === id) n++;
  return n;
}

interface Answered {
  requestHash: string;
  outcome: string | null;
  /** Every event the key's request (or transaction) stored, in position order. */
  events: StoredEvent[];
}

/**
 * The answer to a request (or transaction) whose key is already taken, per member: a replay of the
 * first answer — the member's own aggregate's events out of those the key names — or
 * IDEMPOTENCY_KEY_REUSED.
 */
function replayOf(
  req: AppendRequest,
  key: string,
  answered: Map<string, Answered>,
  remembered: Map<string, RememberedKey>,
): ((member: AppendRequest) => AppendOutcome) | undefined {
  const id = idempotencyKeyOf(req.tenantId, key);
  const prior = answered.get(id) ?? fromStore(remembered.get(id));
  if (!prior) return undefined;
  if (prior.requestHash !== req.idempotency!.requestHash) {
    const error = idempotencyKeyReused(key);
    return () => ({ ok: false, error });
  }
  // The same events objects: an adapter that numbers positions after the statement (PostgreSQL) numbers both.
  // A lone request's key names its events only; a transaction member answers its aggregate's share.
  return (member) => {
    const events = member.transaction ? prior.events.filter((e) => e.aggregateId === member.aggregateId) : prior.events;
    const { aggregateId, aggregateType } = events[0] ?? { aggregateId: member.aggregateId, aggregateType: prior.events[0].aggregateType };
    return { ok: true, result: { aggregateId, aggregateType, events, replay: { outcome: prior.outcome } } };
  };
}

function fromStore(r: RememberedKey | undefined): Answered | undefined {
  if (!r) return undefined;
  // The key and its events are written in one transaction and events are never removed: cannot happen.
  if (r.events.length === 0) throw new Error('an idempotency key names no stored events');
  return { requestHash: r.requestHash, outcome: r.outcome, events: r.events };
}

/** Distinct tenants of a batch, sorted: locks are always taken in this order so writers never deadlock. */
export function tenantsOf(requests: AppendRequest[]): string[] {
  return [...new Set(requests.map((r) => r.tenantId))].sort();
}

/** Appends keep timestamps non-decreasing per process even if the wall clock steps back. */
export class MonotonicClock {
  private last = 0;
  now(): number {
    const t = Date.now();
    this.last = t > this.last ? t : this.last;
    return this.last;
  }
}
