import { StoredEvent } from './event-log.port';

/** The service's own stream of erasures: one per tenant, its events `$erased` (README "Erasure"). */
export const SYSTEM_AGGREGATE_TYPE = '$system';
export const ERASURES_AGGREGATE_ID = '$erasures';
export const ERASED_EVENT_TYPE = '$erased';

export interface ErasureResult {
  aggregateId: string;
  aggregateType: string;
  /** Epoch ms of the erasure (the first one, for a repeated erase). */
  erasedAt: number;
  /** The aggregate's version: how many events are tombstones now (no version or position moved). */
  version: number;
  /** The `$erased` event written in the erasure's own transaction. */
  erasedEvent: StoredEvent;
  /** true when the aggregate had been erased before: nothing changed, the first erasure is answered. */
  alreadyErased: boolean;
}

/**
 * Erases an aggregate for good, in ONE transaction under the tenant's append lock: its events'
 * `data` and `metadata` (tombstones keep ids, versions, positions, types, timestamps), its
 * snapshot, the state of the notifications its events caused (and so of their pending webhook
 * deliveries, which read it when sent), the stream frozen against appends, and the `$erased`
 * system event appended at the tenant's head. Throws NOT_FOUND for an unknown aggregate and
 * RESERVED_NAME for the service's own streams. Who calls it: events/ (EventEraser). Adapters: SQLite
 * (SqliteErasureTransaction on the writer thread), PostgresEventLog (store.erasure).
 */
export abstract class AggregateErasure {
  abstract erase(tenantId: string, aggregateId: string): Promise<ErasureResult>;
}
