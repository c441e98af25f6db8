import {
  aggregateErased,
  aggregateTypeMismatch,
  DomainError,
  idempotencyKeyReused,
  reservedName,
  versionConflict,
} from '../common/domain-error';
import { uuidv7 } from '../common/uuid-v7';
import { AppendOutcome, AppendRequest, AppendResult, Snapshot, StoredEvent, StreamInfo } from './event-log.port';

export const streamKey = (tenantId: string, aggregateId: string): string => `${tenantId}\u0000${aggregateId}`;

/** An idempotency key of a tenant (the store's primary key, as one string). */
export const idempotencyKeyOf = (tenantId: string, key: string): string => `${tenantId}\u0000${key}`;

/** A key the store remembers (not expired): the request it answered and the events that request stored. */
export interface RememberedKey {
  requestHash: string;
  outcome: string | null;
  /** In position order; never empty. */
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
 */
export function planAppends(
  requests: AppendRequest[],
  current: Map<string, StreamInfo>,
  heads: Map<string, number>,
  now: number,
  remembered: Map<string, RememberedKey> = new Map(),
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

  for (const req of requests) {
    // Before any check of versions: a replay answers what was stored, whatever the stream is now.
    const replay = req.idempotency && replayOf(req, req.idempotency.key, answered, remembered);
    if (replay) {
      outcomes.push(replay);
      continue;
    }
    const key = streamKey(req.tenantId, req.aggregateId);
    const known = streams.get(key) ?? current.get(key);
    const version = known?.version ?? 0;
    const aggregateType = decideAggregateType(req, known?.aggregateType);
    if (aggregateType instanceof DomainError) {
      outcomes.push({ ok: false, error: aggregateType });
      continue;
    }
    // Erased: refused whatever else the request says (read under the commit's lock: see erasure-schema.ts).
    const erasedAt = current.get(key)?.erasedAt;
    if (erasedAt !== undefined) {
      outcomes.push({ ok: false, error: aggregateErased(req.aggregateId, erasedAt) });
      continue;
    }
    // The service's own streams ($system, $erasures) take no appends from tenants: no '$' type, and no
    // '$' id either (else a tenant could take $erasures before the first erasure writes to it).
    if (aggregateType.startsWith('$') || req.aggregateId.startsWith('$')) {
      const [field, value] = aggregateType.startsWith('$') ? ['aggregateType', aggregateType] : ['aggregateId', req.aggregateId];
      outcomes.push({ ok: false, error: reservedName(field, value) });
      continue;
    }
    if (req.expectedVersion !== undefined && req.expectedVersion !== version) {
      outcomes.push({ ok: false, error: versionConflict(req.expectedVersion, version) });
      continue;
    }
    if (req.snapshot && req.snapshot.baseVersion !== version) {
      outcomes.push({
        ok: false,
        error: new DomainError('STATE_STALE', 'the aggregate moved on while its state was computed', { actualVersion: version }),
      });
      continue;
    }
    // Last: every reason above outranks the reducer's, which was computed on this very version.
    if (req.refusal) {
      outcomes.push({ ok: false, error: new DomainError(req.refusal.code, req.refusal.message, req.refusal.details) });
      continue;
    }
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
    outcomes.push({ ok: true, result });
    if (req.idempotency) {
      const idem = req.idempotency;
      const outcome = idem.outcome ?? null;
      keys.push({
        tenantId: req.tenantId,
        key: idem.key,
        requestHash: idem.requestHash,
        firstPosition: events[0].position,
        lastPosition: position,
        outcome,
        createdAt: now,
      });
      answered.set(idempotencyKeyOf(req.tenantId, idem.key), { requestHash: idem.requestHash, outcome, result });
    }
  }
  const touchedHeads = new Map<string, number>();
  for (const [tenantId, pos] of nextHeads) if (pos !== heads.get(tenantId)) touchedHeads.set(tenantId, pos);
  return { outcomes, rows, streams: [...streams.values()], heads: touchedHeads, snapshots: [...snapshots.values()], keys };
}

interface Answered {
  requestHash: string;
  outcome: string | null;
  result: AppendResult;
}

/** The answer to a request whose key is already taken: a replay of the first answer, or IDEMPOTENCY_KEY_REUSED. */
function replayOf(
  req: AppendRequest,
  key: string,
  answered: Map<string, Answered>,
  remembered: Map<string, RememberedKey>,
): AppendOutcome | undefined {
  const id = idempotencyKeyOf(req.tenantId, key);
  const prior = answered.get(id) ?? fromStore(remembered.get(id));
  if (!prior) return undefined;
  if (prior.requestHash !== req.idempotency!.requestHash) return { ok: false, error: idempotencyKeyReused(key) };
  // The same events objects: an adapter that numbers positions after the statement (PostgreSQL) numbers both.
  return { ok: true, result: { ...prior.result, replay: { outcome: prior.outcome } } };
}

function fromStore(r: RememberedKey | undefined): Answered | undefined {
  if (!r) return undefined;
  const first = r.events[0];
  // The key and its events are written in one transaction and events are never removed: cannot happen.
  if (!first) throw new Error('an idempotency key names no stored events');
  return {
    requestHash: r.requestHash,
    outcome: r.outcome,
    result: { aggregateId: first.aggregateId, aggregateType: first.aggregateType, events: r.events },
  };
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
