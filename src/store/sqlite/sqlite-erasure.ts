import type Database from 'better-sqlite3';
import { ErasureResult } from '../erasure.port';
import { driveSync, erasureSteps } from '../erasure-steps';
import { sqliteParams } from '../sql-dialect';
import { statementCache } from './statement-cache';

/**
 * An erasure as one SQLite transaction (BEGIN IMMEDIATE: the write lock for its whole length, so no
 * append or lane commit comes between its statements). Runs on the writer thread beside the appends
 * (AppendWriterTurns in append-writer-thread.ts), or on the caller's connection for ':memory:'. Synchronous.
 */
export class SqliteErasureTransaction {
  private readonly stmt;
  private readonly tx: Database.Transaction<(tenantId: string, aggregateId: string, now: number) => ErasureResult>;

  constructor(db: Database.Database) {
    this.stmt = statementCache(db);
    this.tx = db.transaction((tenantId: string, aggregateId: string, now: number) =>
      driveSync(erasureSteps('sqlite', tenantId, aggregateId, now), (s) => {
        const prepared = this.stmt(s.sql);
        return s.kind === 'all' ? prepared.all(...sqliteParams(s.params)) : prepared.run(...sqliteParams(s.params)).changes;
      }),
    );
  }

  erase(tenantId: string, aggregateId: string, now: number): ErasureResult {
    return this.tx.immediate(tenantId, aggregateId, now);
  }
}
