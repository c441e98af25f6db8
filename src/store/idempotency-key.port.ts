/**
 * The idempotency keys of appends, outside the append itself (which reads and writes them in its own
 * transaction, event-log.port.ts): what the expiry sweep needs. Adapter: SqlIdempotencyKeyRepository
 * (both stores, store.idempotencyKeys). Who calls it: IdempotencyKeySweep.
 */
export abstract class IdempotencyKeyRepository {
  /**
   * Deletes keys remembered before `before` (epoch ms), every tenant, at most `limit` of them; answers
   * how many. Safe on several instances at once (two deletes of one row: the second finds nothing).
   */
  abstract deleteExpired(before: number, limit: number): Promise<number>;
}
