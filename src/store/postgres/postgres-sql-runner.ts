import { Pool } from 'pg';
import { GuardMissed, guardHolds, SqlRunner, SqlStatement, toPgPlaceholders } from '../sql-runner';
import { withTransaction } from './with-transaction';

export class PostgresSqlRunner implements SqlRunner {
  readonly dialect = 'postgres' as const;
  private readonly converted = new Map<string, string>();

  constructor(
    private readonly pool: Pool,
    /**
     * Batches commit with synchronous_commit=off (derived rows: see SqlLaneRuns): a crash of the
     * server may lose the last of them; a later synchronous commit's WAL flush covers them too.
     */
    private readonly asyncCommit = false,
  ) {}

  private pg(sql: string): string {
    let s = this.converted.get(sql);
    if (!s) this.converted.set(sql, (s = toPgPlaceholders(sql)));
    return s;
  }

  async all<T>(sql: string, params: unknown[]): Promise<T[]> {
    return (await this.pool.query(this.pg(sql), params)).rows as T[];
  }

  async run(sql: string, params: unknown[]): Promise<number> {
    return (await this.pool.query(this.pg(sql), params)).rowCount ?? 0;
  }

  async batch(statements: SqlStatement[]): Promise<boolean> {
    try {
      await withTransaction(this.pool, async (client) => {
        if (this.asyncCommit) await client.query('SET LOCAL synchronous_commit = off');
        for (const s of statements) {
          const r = await client.query(this.pg(s.sql), s.params);
          if (!guardHolds(s, r.rowCount ?? 0)) throw new GuardMissed();
        }
      });
      return true;
    } catch (e) {
      if (e instanceof GuardMissed) return false;
      throw e;
    }
  }
}
