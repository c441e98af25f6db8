import { IdempotencyKeyRepository } from './idempotency-key.port';
import { SqlRunner } from './sql-runner';

/** The expiry sweep's one statement, the same on both stores (by the created_at index, a bounded chunk). */
export class SqlIdempotencyKeyRepository implements IdempotencyKeyRepository {
  constructor(private readonly sql: SqlRunner) {}

  deleteExpired(before: number, limit: number): Promise<number> {
    // A chunk, so that one sweep after a long pause holds no lock (and no SQLite writer turn) for long.
    return this.sql.run(
      `DELETE FROM idempotency_keys WHERE (tenant_id, idem_key) IN (
         SELECT tenant_id, idem_key FROM idempotency_keys WHERE created_at < ? ORDER BY created_at LIMIT ?)`,
      [before, limit],
    );
  }
}
