import type Database from 'better-sqlite3';
import { sqliteParams } from '../sql-dialect';
import { statementCache } from './statement-cache';
import { GuardMissed, SqlRunner, SqlStatement } from '../sql-runner';
import { SqlWrite, SqlWriteOutcome, writeError } from './sqlite-write-batch';

interface PendingWrite {
  statements: SqlStatement[];
  resolve: (changes: number) => void;
  reject: (e: unknown) => void;
}

/** Commits a group of writes as one transaction (the writer thread, or this thread for ':memory:'). */
export type CommitWrites = (writes: SqlWrite[]) => Promise<SqlWriteOutcome[]>;

/**
 * Reads run here, on this thread's connection. Writes are group-committed: every write asked for
 * in the same tick (lane runs, notification logs, webhook bookkeeping) goes into ONE transaction,
 * each in a savepoint of its own so that one failing write fails only its caller. The transaction
 * runs on the writer thread, beside the appends: its fsync (synchronous=FULL, before any write is
 * answered) and any wait for the write lock the appends hold block that thread, not the event loop.
 */
export class SqliteSqlRunner implements SqlRunner {
  readonly dialect = 'sqlite' as const;
  private queue: PendingWrite[] = [];

  constructor(
    private readonly db: Database.Database,
    private readonly commit: CommitWrites,
  ) {}

  private readonly stmt = statementCache(this.db);

  async all<T>(sql: string, params: unknown[]): Promise<T[]> {
    return this.stmt(sql).all(...sqliteParams(params)) as T[];
  }

  run(sql: string, params: unknown[]): Promise<number> {
    return this.write([{ sql, params }]);
  }

  async batch(statements: SqlStatement[]): Promise<boolean> {
    try {
      await this.write(statements);
      return true;
    } catch (e) {
      if (e instanceof GuardMissed) return false;
      throw e;
    }
  }

  private write(given: SqlStatement[]): Promise<number> {
    // Bound here, before the writer thread's structured clone (see sql-dialect.ts).
    const statements = given.map((s) => {
      const params = sqliteParams(s.params);
      return params === s.params ? s : { ...s, params };
    });
    return new Promise((resolve, reject) => {
      if (this.queue.push({ statements, resolve, reject }) === 1) setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    const writes = this.queue;
    this.queue = [];
    let outcomes: SqlWriteOutcome[];
    try {
      outcomes = await this.commit(writes.map((w) => w.statements));
    } catch (error) {
      for (const w of writes) w.reject(error);
      return;
    }
    writes.forEach((w, i) => {
      const o = outcomes[i];
      if (o.ok) w.resolve(o.changes);
      else w.reject(writeError(o));
    });
  }
}
