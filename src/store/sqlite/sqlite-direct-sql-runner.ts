import type Database from 'better-sqlite3';
import { sqliteParams } from '../sql-dialect';
import { statementCache } from './statement-cache';
import { GuardMissed, guardHolds, SqlRunner, SqlStatement } from '../sql-runner';

/**
 * Reads and writes on this thread's connection, a write committed before its call returns. For the
 * rare writes (tenants, keys, limits, uploads, bindings, snapshots written outside an append),
 * answered this way since they were first written: callers see their write in the store at once,
 * with no wait for a group commit (the compile queue's turns depend on it: compile-queue.spec.ts).
 * The busy writes (lanes, notifications, webhooks) go through SqliteSqlRunner's group commit on
 * the writer thread instead.
 */
export class SqliteDirectSqlRunner implements SqlRunner {
  readonly dialect = 'sqlite' as const;

  constructor(private readonly db: Database.Database) {}

  private readonly stmt = statementCache(this.db);

  async all<T>(sql: string, params: unknown[]): Promise<T[]> {
    return this.stmt(sql).all(...sqliteParams(params)) as T[];
  }

  async run(sql: string, params: unknown[]): Promise<number> {
    return this.stmt(sql).run(...sqliteParams(params)).changes;
  }

  async batch(statements: SqlStatement[]): Promise<boolean> {
    try {
      this.db.transaction(() => {
        for (const s of statements) {
          if (!guardHolds(s, this.stmt(s.sql).run(...sqliteParams(s.params)).changes)) throw new GuardMissed();
        }
      })();
      return true;
    } catch (e) {
      if (e instanceof GuardMissed) return false;
      throw e;
    }
  }
}
