import type Database from 'better-sqlite3';
import { MonotonicClock, planAppends, streamKey, tenantsOf } from '../append-plan';
import { AppendOutcome, AppendRequest, EventLog, StoredEvent, StreamInfo } from '../event-log.port';
import { EVENT_COLUMNS as COLUMNS, EventDbRow, toStoredEvent } from '../event-row';

export class SqliteEventLog implements EventLog {
  private readonly clock = new MonotonicClock();
  private stmts!: ReturnType<SqliteEventLog['compile']>;
  private appendTx!: Database.Transaction<(reqs: AppendRequest[]) => AppendOutcome[]>;

  constructor(private readonly db: Database.Database) {}

  /** Called after migrations, when the tables exist. */
  prepare(): void {
    this.stmts = this.compile();
    // SQLite has no round trips, so prepared statements run per row inside one transaction
    // are its set-based form: the cost that group commit removes is the fsync per commit.
    this.appendTx = this.db.transaction((reqs: AppendRequest[]) => {
      const heads = new Map<string, number>();
      for (const t of tenantsOf(reqs)) {
        const row = this.stmts.head.get(t) as { position: number } | undefined;
        heads.set(t, row ? Number(row.position) : 0);
      }
      const current = new Map<string, StreamInfo>();
      for (const r of reqs) {
        const key = streamKey(r.tenantId, r.aggregateId);
        if (current.has(key)) continue;
        const s = this.stmts.stream.get(r.tenantId, r.aggregateId) as { aggregate_type: string; version: number } | undefined;
        if (s) current.set(key, { aggregateType: s.aggregate_type, version: Number(s.version) });
      }
      const plan = planAppends(reqs, current, heads, this.clock.now());
      for (const e of plan.rows) {
        this.stmts.insertEvent.run(
          e.tenantId, e.position, e.aggregateId, e.version, e.eventId, e.aggregateType, e.eventType,
          e.data, e.metadata, e.correlationId, e.causationId, e.timestamp,
        );
      }
      for (const s of plan.streams) this.stmts.upsertStream.run(s.tenantId, s.aggregateId, s.aggregateType, s.version);
      for (const [t, p] of plan.heads) this.stmts.upsertHead.run(t, p);
      return plan.outcomes;
    });
  }

  private compile() {
    const db = this.db;
    return {
      head: db.prepare('SELECT position FROM tenant_heads WHERE tenant_id = ?'),
      stream: db.prepare('SELECT aggregate_type, version FROM streams WHERE tenant_id = ? AND aggregate_id = ?'),
      insertEvent: db.prepare(
        `INSERT INTO events (tenant_id, position, aggregate_id, version, event_id, aggregate_type, event_type,
           data, metadata, correlation_id, causation_id, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`,
      ),
      upsertStream: db.prepare(
        `INSERT INTO streams (tenant_id, aggregate_id, aggregate_type, version) VALUES (?,?,?,?)
         ON CONFLICT (tenant_id, aggregate_id) DO UPDATE SET version = excluded.version`,
      ),
      upsertHead: db.prepare(
        `INSERT INTO tenant_heads (tenant_id, position) VALUES (?, ?)
         ON CONFLICT (tenant_id) DO UPDATE SET position = excluded.position`,
      ),
      readStream: db.prepare(
        `SELECT ${COLUMNS} FROM events WHERE tenant_id = ? AND aggregate_id = ? AND version >= ? ORDER BY version LIMIT ?`,
      ),
      readAll: db.prepare(`SELECT ${COLUMNS} FROM events WHERE tenant_id = ? AND position > ? ORDER BY position LIMIT ?`),
    };
  }

  async appendMany(requests: AppendRequest[]): Promise<AppendOutcome[]> {
    return this.appendTx.immediate(requests);
  }

  async readStream(tenantId: string, aggregateId: string, fromVersion: number, limit: number): Promise<StoredEvent[]> {
    return (this.stmts.readStream.all(tenantId, aggregateId, fromVersion, limit) as EventDbRow[]).map(toStoredEvent);
  }

  async readAll(tenantId: string, afterPosition: number, limit: number): Promise<StoredEvent[]> {
    return (this.stmts.readAll.all(tenantId, afterPosition, limit) as EventDbRow[]).map(toStoredEvent);
  }

  async streamInfo(tenantId: string, aggregateId: string): Promise<StreamInfo | null> {
    const s = this.stmts.stream.get(tenantId, aggregateId) as { aggregate_type: string; version: number } | undefined;
    return s ? { aggregateType: s.aggregate_type, version: Number(s.version) } : null;
  }

  async headPosition(tenantId: string): Promise<number> {
    const row = this.stmts.head.get(tenantId) as { position: number } | undefined;
    return row ? Number(row.position) : 0;
  }
}
