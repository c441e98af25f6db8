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
}
