import { Snapshot } from './event-log.port';

/** Which reducer (compiled upload + class) computes the state of an aggregate type. */
export interface Binding {
  tenantId: string;
  aggregateType: string;
  reducerId: string;
  className: string;
  /** New on every bind: snapshots made under another binding id are stale. */
  bindingId: string;
  boundAt: number;
}

/** An aggregate whose state under a binding is held at the event its reducer failed on. */
export interface FailedAggregate {
  aggregateId: string;
  /** The aggregate's version the snapshot covers (events after the failed one are stored, not applied). */
  version: number;
  failedVersion: number;
  /** The stored error: the host's item code (or the service's failure code), then the message. */
  error: string;
  /** The failed event's id and type (null only if the event is gone, which an erasure would also take the snapshot with). */
  eventId: string | null;
  eventType: string | null;
  /** Epoch ms of the last event the snapshot covers. */
  updatedAt: number;
}

/** Reducer bindings (store.bindings). Adapter: SqlBindingRepository. Who calls it: reducers/ (BindingLookup, AggregateBinder). */
export abstract class BindingRepository {
  abstract put(binding: Binding): Promise<void>;
  abstract get(tenantId: string, aggregateType: string): Promise<Binding | null>;
  /** The tenant's bindings in aggregate type order after `afterType` (GET /aggregate-types). */
  abstract list(tenantId: string, afterType: string, limit: number): Promise<Binding[]>;
}

/** Aggregate states (store.snapshots). Adapter: SqlSnapshotRepository. Who calls it: reducers/ (AggregateStateKeeper, StateCatchUp). */
export abstract class SnapshotRepository {
  abstract get(tenantId: string, aggregateId: string): Promise<Snapshot | null>;
  /**
   * Writes a snapshot computed outside an append (catch-up, a read that computed it), unless the
   * stored one is of the same binding and at least as new: catch-up never regresses what an
   * append wrote meanwhile.
   */
  abstract putIfNewer(tenantId: string, snapshot: Snapshot): Promise<void>;
  /** Aggregates of a type in id order, for catch-up to walk in pages. */
  abstract listAggregates(
    tenantId: string,
    aggregateType: string,
    afterAggregateId: string,
    limit: number,
  ): Promise<{ aggregateId: string; version: number }[]>;
  /**
   * Aggregates of a type whose snapshot under `bindingId` is failed, in id order after
   * `afterAggregateId`, at most `limit` (GET /aggregate-types/{type}/failed). Snapshots are written
   * by every instance in the store, so this is the service's answer, not one instance's.
   */
  abstract listFailed(
    tenantId: string,
    aggregateType: string,
    bindingId: string,
    afterAggregateId: string,
    limit: number,
  ): Promise<FailedAggregate[]>;
}
