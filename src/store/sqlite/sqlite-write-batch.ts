import type Database from 'better-sqlite3';
import { statementCache } from './statement-cache';
import { GuardMissed, guardHolds, SqlStatement } from '../sql-runner';

/** One caller's write: its statements, kept or rolled back together. */
export type SqlWrite = SqlStatement[];

/** What became of one write of a group commit (plain data: it crosses from the writer thread). */
export type SqlWriteOutcome =
  { ok: true; changes: number } | { ok: false; error: { message: string; code?: string; guardMissed?: boolean } };

/**
 * Runs writes as ONE transaction, each in a savepoint of its own so that one failing write fails
 * only its caller: one fsync (synchronous=FULL) for all of them. Throws when the transaction itself
 * fails (nothing of any write kept). Runs on the writer thread, beside the appends (see
 * AppendWriterTurns in append-writer-thread.ts), so neither the fsync nor a wait for the write lock stalls the event loop.
 */
export class SqliteWriteBatch {
  constructor(private readonly db: Database.Database) {}

  private readonly stmt = statementCache(this.db);

  /**
   * `derived`: the writes are rows recomputed from their own checkpoint (lane runs and routing, see
   * SqlLaneRuns and docs/scaling.md), committed with synchronous=NORMAL: no fsync of their own. In WAL
   * mode a process crash (kill -9) still loses nothing of them (the frames are in the OS's cache);
   * a power loss may lose those after the last fsync (the next append's, or a checkpoint's), whose
   * checkpoint goes with them, so the lanes apply those events again. The WAL is one ordered file:
   * an append's fsync covers every frame before it, derived or not.
   */
  commit(writes: SqlWrite[], derived = false): SqlWriteOutcome[] {
    const outcomes: SqlWriteOutcome[] = [];
    if (derived) this.db.exec('PRAGMA synchronous = NORMAL');
    try {
      this.db.exec('BEGIN IMMEDIATE');
      for (const statements of writes) {
        this.db.exec('SAVEPOINT w');
        try {
          let changes = 0;
          for (const s of statements) {
            const c = this.stmt(s.sql).run(...s.params).changes;
            if (!guardHolds(s, c)) throw new GuardMissed();
            changes += c;
          }
          this.db.exec('RELEASE w');
          outcomes.push({ ok: true, changes });
        } catch (error) {
          this.db.exec('ROLLBACK TO w');
          this.db.exec('RELEASE w');
          const e = error as { message?: string; code?: string };
          outcomes.push({
            ok: false,
            error: { message: e.message ?? String(error), code: e.code, guardMissed: error instanceof GuardMissed },
          });
        }
      }
      this.db.exec('COMMIT');
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw error;
    } finally {
      // Back at once: every other commit of this connection (appends above all) is FULL.
      if (derived) this.db.exec('PRAGMA synchronous = FULL');
    }
    return outcomes;
  }
}

/** The error a caller of a failed write sees. */
export function writeError(o: Extract<SqlWriteOutcome, { ok: false }>): Error {
  if (o.error.guardMissed) return new GuardMissed();
  return Object.assign(new Error(o.error.message), o.error.code !== undefined ? { code: o.error.code } : {});
}
