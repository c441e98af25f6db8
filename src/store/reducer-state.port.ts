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

export interface BindingRepository {
  put(binding: Binding): Promise<void>;
  get(tenantId: string, aggregateType: string): Promise<Binding | null>;
}

export interface SnapshotRepository {
  get(tenantId: string, aggregateId: string): Promise<Snapshot | null>;
  /**
   * Writes a snapshot computed outside an append (catch-up, a read that computed it), unless the
   * stored one is of the same binding and at least as new: catch-up never regresses what an
   * append wrote meanwhile.
   */
  putIfNewer(tenantId: string, snapshot: Snapshot): Promise<void>;
  /** Aggregates of a type in id order, for catch-up to walk in pages. */
  listAggregates(
    tenantId: string,
    aggregateType: string,
    afterAggregateId: string,
    limit: number,
  ): Promise<{ aggregateId: string; version: number }[]>;
}
