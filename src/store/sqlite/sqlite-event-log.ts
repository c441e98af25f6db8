import type Database from 'better-sqlite3';
import { AppendOutcome, AppendRequest, EventLog, LogQuery, StoredEvent, StreamInfo } from '../event-log.port';
import { EVENT_COLUMNS as COLUMNS, EventDbRow, StreamDbRow, toStoredEvent, toStreamInfo } from '../event-row';
import { logQuerySql } from '../log-query-sql';
import { statementCache } from './statement-cache';
import type { AppendWriterThread } from './append-writer-thread';

export class SqliteEventLog implements EventLog {
  private stmts!: ReturnType<SqliteEventLog['compile']>;
  /** The log reads' statements, one per shape (filter list lengths, direction). */
  private statement!: ReturnType<typeof statementCache>;

  /**
   * Reads run here, on the caller's connection; appends go to the writer thread (for a private
   * ':memory:' database, which a thread cannot share, SqliteStore gives a stand-in on this thread).
   */
  constructor(
    private readonly db: Database.Database,
    private readonly writer: Pick<AppendWriterThread, 'append'>,
  ) {}

  /** Called after migrations, when the tables exist. */
  prepare(): void {
    this.stmts = this.compile();
    this.statement = statementCache(this.db);
  }

  private compile() {
    const db = this.db;
    return {
      head: db.prepare('SELECT position FROM tenant_heads WHERE tenant_id = ?'),
      stream: db.prepare('SELECT aggregate_type, version, erased_at FROM streams WHERE tenant_id = ? AND aggregate_id = ?'),
      readStream: db.prepare(
        `SELECT ${COLUMNS} FROM events WHERE tenant_id = ? AND aggregate_id = ? AND version >= ? ORDER BY version LIMIT ?`,
      ),
      readStreamBackward: db.prepare(
        `SELECT ${COLUMNS} FROM events WHERE tenant_id = ? AND aggregate_id = ? AND version <= ? ORDER BY version DESC LIMIT ?`,
      ),
      readAll: db.prepare(`SELECT ${COLUMNS} FROM events WHERE tenant_id = ? AND position > ? ORDER BY position LIMIT ?`),
    };
  }

  appendMany(requests: AppendRequest[]): Promise<AppendOutcome[]> {
    return this.writer.append(requests);
  }

  async readStream(tenantId: string, aggregateId: string, fromVersion: number, limit: number): Promise<StoredEvent[]> {
    return (this.stmts.readStream.all(tenantId, aggregateId, fromVersion, limit) as EventDbRow[]).map(toStoredEvent);
  }

  async readAll(tenantId: string, afterPosition: number, limit: number): Promise<StoredEvent[]> {
    return (this.stmts.readAll.all(tenantId, afterPosition, limit) as EventDbRow[]).map(toStoredEvent);
  }

  async readStreamBackward(tenantId: string, aggregateId: string, atOrBeforeVersion: number, limit: number): Promise<StoredEvent[]> {
    return (this.stmts.readStreamBackward.all(tenantId, aggregateId, atOrBeforeVersion, limit) as EventDbRow[]).map(toStoredEvent);
  }

  async readLog(tenantId: string, query: LogQuery): Promise<StoredEvent[]> {
    const values: unknown[] = [];
    const sql = logQuerySql(tenantId, query, (v) => (values.push(v), '?'), 'sqlite');
    // A DCB query's text varies with its shape (items, tags, types): prepared each time, not cached.
    const statement = query.query ? this.db.prepare(sql) : this.statement(sql);
    return (statement.all(...values) as EventDbRow[]).map(toStoredEvent);
  }

  async streamInfo(tenantId: string, aggregateId: string): Promise<StreamInfo | null> {
    const s = this.stmts.stream.get(tenantId, aggregateId) as StreamDbRow | undefined;
    return s ? toStreamInfo(s) : null;
  }

  async headPosition(tenantId: string): Promise<number> {
    const row = this.stmts.head.get(tenantId) as { position: number } | undefined;
    return row ? Number(row.position) : 0;
  }
}
