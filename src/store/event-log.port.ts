import { DomainError } from '../common/domain-error';

/** Payloads travel as JSON text: validated once at the edge, stored and handed on without re-encoding. */
export interface NewEvent {
  eventType: string;
  data: string;
  /** Pre-assigned when a reducer must see the event before it is stored; else drawn at commit. */
  eventId?: string;
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
  /**
   * The aggregate's state after these events, computed by its reducer before the commit and
   * written in the same transaction. Only valid if the aggregate is still at `baseVersion`;
   * otherwise the request fails with STATE_STALE and stores nothing (the caller recomputes).
   */
  snapshot?: SnapshotChange;
  /** Pre-assigned (epoch ms) with the event ids, for the same reason. */
  timestamp?: number;
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
  /** Epoch ms of the aggregate's erasure; set only on an erased event (data '{}', metadata null). */
  erasedAt?: number;
}

export interface AppendResult {
  aggregateId: string;
  aggregateType: string;
  events: StoredEvent[];
}

export type AppendOutcome = { ok: true; result: AppendResult } | { ok: false; error: DomainError };

export interface StreamInfo {
  aggregateType: string;
  version: number;
  /** Epoch ms; set when the aggregate was erased (no append, no state any more). */
  erasedAt?: number;
}

/**
 * The event log. `appendMany` is the group-commit primitive: all requests in one transaction,
 * each checked on its own; a request that fails (version or type conflict) stores nothing and
 * does not affect the others.
 */
export interface EventLog {
  appendMany(requests: AppendRequest[]): Promise<AppendOutcome[]>;
  readStream(tenantId: string, aggregateId: string, fromVersion: number, limit: number): Promise<StoredEvent[]>;
  /** Events with position > afterPosition, ascending. What projections read. */
  readAll(tenantId: string, afterPosition: number, limit: number): Promise<StoredEvent[]>;
  streamInfo(tenantId: string, aggregateId: string): Promise<StreamInfo | null>;
  headPosition(tenantId: string): Promise<number>;
}
