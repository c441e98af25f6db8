import type Database from 'better-sqlite3';
import { SqlRunner, SqlStatement } from '../sql-runner';

export class SqliteSqlRunner implements SqlRunner {
  private readonly cache = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  private stmt(sql: string): Database.Statement {
    let s = this.cache.get(sql);
    if (!s) this.cache.set(sql, (s = this.db.prepare(sql)));
    return s;
  }

  async all<T>(sql: string, params: unknown[]): Promise<T[]> {
    return this.stmt(sql).all(...params) as T[];
  }

  async run(sql: string, params: unknown[]): Promise<number> {
    return this.stmt(sql).run(...params).changes;
  }

  async batch(statements: SqlStatement[]): Promise<void> {
    this.db.transaction(() => {
      for (const s of statements) this.stmt(s.sql).run(...s.params);
    }).immediate();
  }
}
