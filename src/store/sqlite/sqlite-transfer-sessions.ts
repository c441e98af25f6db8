import type Database from 'better-sqlite3';
import { sqliteParams } from '../sql-dialect';
import { TransferSession, TransferSessions } from '../sql-tenant-transfer';
import { openSqlite } from './sqlite-connection';

/**
 * A connection of its own per export or import (the file's; the in-memory database of unit tests
 * has only the one). An export's read transaction holds its WAL snapshot; an import's BEGIN
 * IMMEDIATE holds the database's one write lock until it commits: see docs/operations.md.
 */
export class SqliteTransferSessions implements TransferSessions {
  constructor(
    private readonly file: string,
    private readonly shared: Database.Database,
  ) {}

  readSnapshot(): Promise<TransferSession> {
    return Promise.resolve(this.open('BEGIN'));
  }

  writeTransaction(): Promise<TransferSession> {
    return Promise.resolve(this.open('BEGIN IMMEDIATE'));
  }

  private open(begin: string): TransferSession {
    const own = this.file !== ':memory:';
    const db = own ? openSqlite(this.file) : this.shared;
    try {
      db.exec(begin);
    } catch (e) {
      if (own) db.close();
      throw e;
    }
    const statements = new Map<string, Database.Statement>();
    const stmt = (sql: string) => {
      let s = statements.get(sql);
      if (!s) statements.set(sql, (s = db.prepare(sql)));
      return s;
    };
    return {
      all: async <T>(sql: string, params: unknown[]) => stmt(sql).all(...sqliteParams(params)) as T[],
      run: async (sql: string, params: unknown[]) => {
        if (sql === 'COMMIT') db.exec('COMMIT');
        else stmt(sql).run(...sqliteParams(params));
      },
      release: async () => {
        if (db.inTransaction) db.exec('ROLLBACK');
        if (own) db.close();
      },
      isConflict: (e: unknown) => /^SQLITE_CONSTRAINT_(PRIMARYKEY|UNIQUE)/.test((e as { code?: string })?.code ?? ''),
      isInvalidRow: (e: unknown) => /^SQLITE_(CONSTRAINT|MISMATCH)/.test((e as { code?: string })?.code ?? ''),
    };
  }
}
