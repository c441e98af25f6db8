import type Database from 'better-sqlite3';
import { Snapshot } from '../event-log.port';
import { Binding, BindingRepository, SnapshotRepository } from '../reducer-state.port';
import { BindingDbRow, SNAPSHOT_COLUMNS, SnapshotDbRow, toBinding, toSnapshot } from '../snapshot-row';

export class SqliteBindingRepository implements BindingRepository {
  constructor(private readonly db: Database.Database) {}

  /** Prepared once, on first use (these run on every append; the tables exist only after migrations). */
  private readonly stmts = new Map<string, Database.Statement>();
  private stmt(sql: string): Database.Statement {
    let st = this.stmts.get(sql);
    if (!st) this.stmts.set(sql, (st = this.db.prepare(sql)));
    return st;
  }

  async put(b: Binding): Promise<void> {
    this.stmt(
      `INSERT INTO bindings (tenant_id, aggregate_type, reducer_id, class_name, binding_id, bound_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, aggregate_type) DO UPDATE SET reducer_id = excluded.reducer_id, class_name = excluded.class_name,
         binding_id = excluded.binding_id, bound_at = excluded.bound_at`,
    ).run(b.tenantId, b.aggregateType, b.reducerId, b.className, b.bindingId, b.boundAt);
  }

  async get(tenantId: string, aggregateType: string): Promise<Binding | null> {
    const r = this.stmt('SELECT * FROM bindings WHERE tenant_id = ? AND aggregate_type = ?').get(tenantId, aggregateType) as
      BindingDbRow | undefined;
    return r ? toBinding(r) : null;
  }
}

export class SqliteSnapshotRepository implements SnapshotRepository {
  constructor(private readonly db: Database.Database) {}

  /** Prepared once, on first use (these run on every append; the tables exist only after migrations). */
  private readonly stmts = new Map<string, Database.Statement>();
  private stmt(sql: string): Database.Statement {
    let st = this.stmts.get(sql);
    if (!st) this.stmts.set(sql, (st = this.db.prepare(sql)));
    return st;
  }

  async get(tenantId: string, aggregateId: string): Promise<Snapshot | null> {
    const r = this.stmt(`SELECT ${SNAPSHOT_COLUMNS} FROM snapshots WHERE tenant_id = ? AND aggregate_id = ?`).get(tenantId, aggregateId) as
      SnapshotDbRow | undefined;
    return r ? toSnapshot(r) : null;
  }

  async putIfNewer(tenantId: string, s: Snapshot): Promise<void> {
    this.stmt(
      `INSERT INTO snapshots (tenant_id, aggregate_id, aggregate_type, binding_id, version, state, failed_version, error, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, aggregate_id) DO UPDATE SET binding_id = excluded.binding_id, version = excluded.version,
         state = excluded.state, failed_version = excluded.failed_version, error = excluded.error, updated_at = excluded.updated_at
       WHERE snapshots.binding_id <> excluded.binding_id OR snapshots.version < excluded.version`,
    ).run(tenantId, s.aggregateId, s.aggregateType, s.bindingId, s.version, s.state, s.failedVersion, s.error, s.updatedAt);
  }

  async listAggregates(tenantId: string, aggregateType: string, afterAggregateId: string, limit: number) {
    const rows = this.stmt(
      `SELECT aggregate_id, version FROM streams WHERE tenant_id = ? AND aggregate_type = ? AND aggregate_id > ? ORDER BY aggregate_id LIMIT ?`,
    ).all(tenantId, aggregateType, afterAggregateId, limit) as { aggregate_id: string; version: number }[];
    return rows.map((r) => ({ aggregateId: r.aggregate_id, version: Number(r.version) }));
  }
}
