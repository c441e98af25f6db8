import { Pool } from 'pg';
import { SqlRunner, SqlStatement, toPgPlaceholders } from '../sql-runner';

export class PostgresSqlRunner implements SqlRunner {
  private readonly converted = new Map<string, string>();

  constructor(private readonly pool: Pool) {}

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

  async batch(statements: SqlStatement[]): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      for (const s of statements) await client.query(this.pg(s.sql), s.params);
      await client.query('COMMIT');
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      client.release();
    }
  }
}
