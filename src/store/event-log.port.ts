import { DomainError, ErrorCode } from '../common/domain-error';

/** Payloads travel as JSON text: validated once at the edge, stored and handed on without re-encoding. */
export interface NewEvent {
  eventType: string;
  data: string;
  /** Pre-assigned when a reducer must see the event before it is stored; else drawn at commit. */
  eventId?: string;
  /** The event's tags (DCB): validated at the edge (limits in docs/dcb.md), distinct, in the order given. */
  tags?: string[];
}

/**
 * One item of a DCB query (docs/dcb.md): an event matches when its type is one of `types` (absent:
 * any type) and its tags include every one of `tags` (absent: any tags). An item with neither matches
 * every event.
 */
export interface EventQueryItem {
  types?: string[];
  tags?: string[];
}

/** A DCB query: an event matches when it matches any item. Never empty (the edge refuses `items: []`). */
export interface EventQuery {
  items: EventQueryItem[];
}

/**
 * An append condition (DCB): the append fails with APPEND_CONDITION_FAILED when an event matching
 * `failIfEventsMatch` was stored after `after` (absent: at all), decided in the append's own commit
 * (under the tenant's head lock, events earlier in the same group commit included).
 */
export interface AppendCondition {
  failIfEventsMatch: EventQuery;
  after?: number;
}

/**
 * Membership of a multi-aggregate transaction (POST /events/transaction): its requests, one per
 * aggregate, are contiguous in a group commit, every one carries the same `id` and `size`, and the
 * commit stores all of them or none (each member's outcome is then the first member's failure).
 * The transaction's `condition` and `idempotency` ride on its first member only and cover the whole
 * transaction (its own events never count against its condition; its key spans all its events).
 */
export interface TransactionMembership {
  id: string;
  size: number;
}

export interface AppendRequest {
  tenantId: string;
  aggregateId: string;
  /** Given by the caller; must match the type fixed by the aggregate's first event. */
  aggregateType?: string;
  /** Used when the aggregate is new and no type was given. */
  inferredType: string;
  /** N means: the aggregate must be at version N (0 = must not exist yet). */
  expectedVersion?: number;
  events: NewEvent[];
  correlationId?: string;
  causationId?: string;
  metadata?: string;
  /** The caller's W3C trace context (already checked: a valid traceparent; tracestate only with one), kept with every event. */
  traceParent?: string;
  traceState?: string;
  /**
   * The aggregate's state after these events, computed by its reducer before the commit and
   * written in the same transaction. Only valid if the aggregate is still at `baseVersion`;
   * otherwise the request fails with STATE_STALE and stores nothing (the caller recomputes).
   */
  snapshot?: SnapshotChange;
  /** Pre-assigned (epoch ms) with the event ids, for the same reason. */
  timestamp?: number;
  /** The client's Idempotency-Key: remembered with the events, in their transaction. */
  idempotency?: IdempotencyClaim;
  /** The append condition (DCB): checked after expectedVersion, before the snapshot's base and a refusal. */
  condition?: AppendCondition;
  /** Set on each request of a multi-aggregate transaction (TransactionMembership). */
  transaction?: TransactionMembership;
  /**
   * The reducer refused these events (REDUCER_REJECTED, STATE_TOO_LARGE), folded on `snapshot`'s
   * base: the commit answers this error and stores nothing, after its own checks (a replay of the
   * key, the type, an erasure, expectedVersion, a stale base), so that a retry of an accepted
   * request is still its replay and a refusal on a stale state is recomputed, never answered.
   * Plain data, not the DomainError: a request crosses to SQLite's writer thread by structured clone.
   */
  refusal?: Refusal;
}

/**
 * An append's idempotency key (README "Retrying appends safely"). A key of the tenant already
 * remembered (created at or after `notBefore`) makes the request a replay when `requestHash`
 * matches (nothing stored; the first answer again) and IDEMPOTENCY_KEY_REUSED when it does not.
 */
export interface IdempotencyClaim {
  key: string;
  /** SHA-256 (hex) of the route and the raw body. */
  requestHash: string;
  /** Epoch ms: a key remembered before this has expired and counts as never seen. */
  notBefore: number;
  /** JSON text of the answer's part that is not in the log (the reducer's state), remembered with the key. */
  outcome?: string;
}

/** A DomainError as data (AppendRequest.refusal): the commit answers `new DomainError(code, message, details)`. */
export interface Refusal {
  code: ErrorCode;
  message: string;
  details: Record<string, unknown>;
}

export interface SnapshotChange {
  bindingId: string;
  baseVersion: number;
  /** JSON text of the state after the last good event. */
  state: string;
  /** Set when the reducer threw: the version of the event it failed on, and why. */
  failedVersion?: number;
  error?: string;
}

/** The latest state of one aggregate under one binding of its type. */
export interface Snapshot {
  aggregateId: string;
  aggregateType: string;
  bindingId: string;
  /** The last version the snapshot covers (applied, or skipped after a failure). */
  version: number;
  state: string;
  failedVersion: number | null;
  error: string | null;
  /** Epoch ms of the last event it covers. */
  updatedAt: number;
}

export interface StoredEvent {
  /** Tenant-wide, gap-free, in commit order. */
  position: number;
  eventId: string;
  aggregateId: string;
  aggregateType: string;
  eventType: string;
  version: number;
  /** Epoch milliseconds. */
  timestamp: number;
  data: string;
  metadata: string | null;
  correlationId: string | null;
  causationId: string | null;
  /** The W3C traceparent sent with the append that stored it; absent when none was. */
  traceParent?: string;
  /** The W3C tracestate sent with that traceparent; absent when none was. */
  traceState?: string;
  /** Epoch ms of the aggregate's erasure; set only on an erased event (data '{}', metadata null). */
  erasedAt?: number;
  /** The event's tags, in the order appended; absent when it has none (and after its aggregate's erasure). */
  tags?: string[];
}

export interface AppendResult {
  aggregateId: string;
  aggregateType: string;
  events: StoredEvent[];
  /** Set when the request was a replay of an idempotency key: these are the events stored the first time. */
  replay?: { outcome: string | null };
}

export type AppendOutcome = { ok: true; result: AppendResult } | { ok: false; error: DomainError };

/**
 * One page of the tenant's log (EventLog.readLog). Forward: events with position > afterPosition,
 * ascending. Backward: events with position < beforePosition (absent: from the head), descending.
 * A filter list, when given and not empty, keeps only events whose aggregate type (event type) is
 * one of its values; both lists given, an event must match both. `query` (DCB), when given, keeps
 * only events matching it, on top of the lists.
 */
export type LogQuery = { limit: number; aggregateTypes?: string[]; eventTypes?: string[]; query?: EventQuery } & (
  { direction: 'forward'; afterPosition: number } | { direction: 'backward'; beforePosition?: number }
);

export interface StreamInfo {
  aggregateType: string;
  version: number;
  /** Epoch ms; set when the aggregate was erased (no append, no state any more). */
  erasedAt?: number;
}

/**
 * The event log. `appendMany` is the group-commit primitive: all requests in one transaction,
 * each checked on its own; a request that fails (version or type conflict) stores nothing and
 * does not affect the others. Adapters: SqliteEventLog, PostgresEventLog (StoreModule provides the one
 * chosen, as store.events). Who calls it: AppendBatcher (appendMany), EventReader, AggregateStateKeeper,
 * the lanes' routers (readAll), StoredEventsGauge (headPosition), the event streams (readLog).
 */
export abstract class EventLog {
  abstract appendMany(requests: AppendRequest[]): Promise<AppendOutcome[]>;
  abstract readStream(tenantId: string, aggregateId: string, fromVersion: number, limit: number): Promise<StoredEvent[]>;
  /** Events of the stream with version <= atOrBeforeVersion, descending (GET /events/{id}?direction=backward). */
  abstract readStreamBackward(tenantId: string, aggregateId: string, atOrBeforeVersion: number, limit: number): Promise<StoredEvent[]>;
  /**
   * A page of the tenant's whole log in position order, filtered (LogQuery). Only committed events,
   * gap-free: positions are drawn under the tenant's head lock and committed in their order, so a
   * read never sees position N+1 without N. The one read of the log by position for the HTTP log,
   * the event streams and whatever else follows the log (event webhooks, export).
   */
  abstract readLog(tenantId: string, query: LogQuery): Promise<StoredEvent[]>;
  /** Events with position > afterPosition, ascending. What projections read. */
  abstract readAll(tenantId: string, afterPosition: number, limit: number): Promise<StoredEvent[]>;
  abstract streamInfo(tenantId: string, aggregateId: string): Promise<StreamInfo | null>;
  abstract headPosition(tenantId: string): Promise<number>;
}
