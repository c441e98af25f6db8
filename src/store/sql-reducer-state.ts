import { Snapshot } from './event-log.port';
import { Binding, BindingRepository, FailedAggregate, SnapshotRepository } from './reducer-state.port';
import { epochMs, sqlTime } from './sql-dialect';
import { SqlRunner } from './sql-runner';

const SNAPSHOT_COLUMNS = 'aggregate_id, aggregate_type, binding_id, version, state, failed_version, error, updated_at';

interface SnapshotDbRow {
  aggregate_id: string;
  aggregate_type: string;
  binding_id: string;
  version: number | string;
  state: string;
  failed_version: number | string | null;
  error: string | null;
  updated_at: number | Date;
}

const toSnapshot = (r: SnapshotDbRow): Snapshot => ({
  aggregateId: r.aggregate_id,
  aggregateType: r.aggregate_type,
  bindingId: r.binding_id,
  version: Number(r.version),
  state: r.state,
  failedVersion: r.failed_version === null ? null : Number(r.failed_version),
  error: r.error,
  updatedAt: epochMs(r.updated_at),
});

interface BindingDbRow {
  tenant_id: string;
  aggregate_type: string;
  reducer_id: string;
  class_name: string;
  binding_id: string;
  bound_at: number | Date;
}

const toBinding = (r: BindingDbRow): Binding => ({
  tenantId: r.tenant_id,
  aggregateType: r.aggregate_type,
  reducerId: r.reducer_id,
  className: r.class_name,
  bindingId: r.binding_id,
  boundAt: epochMs(r.bound_at),
});

/** One implementation for both stores over SqlRunner (the time columns differ: see sql-dialect.ts). */
export class SqlBindingRepository implements BindingRepository {
  constructor(private readonly db: SqlRunner) {}

  async put(b: Binding): Promise<void> {
    await this.db.run(
      `INSERT INTO bindings (tenant_id, aggregate_type, reducer_id, class_name, binding_id, bound_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, aggregate_type) DO UPDATE SET reducer_id = excluded.reducer_id, class_name = excluded.class_name,
         binding_id = excluded.binding_id, bound_at = excluded.bound_at`,
      [b.tenantId, b.aggregateType, b.reducerId, b.className, b.bindingId, sqlTime(b.boundAt)],
    );
  }

  async get(tenantId: string, aggregateType: string): Promise<Binding | null> {
    const [r] = await this.db.all<BindingDbRow>(
      'SELECT tenant_id, aggregate_type, reducer_id, class_name, binding_id, bound_at FROM bindings WHERE tenant_id = ? AND aggregate_type = ?',
      [tenantId, aggregateType],
    );
    return r ? toBinding(r) : null;
  }

  async list(tenantId: string, afterType: string, limit: number): Promise<Binding[]> {
    const rows = await this.db.all<BindingDbRow>(
      `SELECT tenant_id, aggregate_type, reducer_id, class_name, binding_id, bound_at FROM bindings
       WHERE tenant_id = ? AND aggregate_type > ? ORDER BY aggregate_type LIMIT ?`,
      [tenantId, afterType, limit],
    );
    return rows.map(toBinding);
  }
}

/**
 * The snapshot an append writes goes in the append's own transaction (the event logs); this is the
 * rest: reads, and writes computed outside an append.
 */
export class SqlSnapshotRepository implements SnapshotRepository {
  constructor(private readonly db: SqlRunner) {}

  async get(tenantId: string, aggregateId: string): Promise<Snapshot | null> {
    const [r] = await this.db.all<SnapshotDbRow>(`SELECT ${SNAPSHOT_COLUMNS} FROM snapshots WHERE tenant_id = ? AND aggregate_id = ?`, [
      tenantId,
      aggregateId,
    ]);
    return r ? toSnapshot(r) : null;
  }

  async putIfNewer(tenantId: string, s: Snapshot): Promise<void> {
    // A state computed from events read before an erasure is never kept after it: the stream's row
    // is locked first (the erasure holds it until it commits), and the last statement, which runs
    // after the lock is granted (PostgreSQL: a snapshot of its own), takes the write back if the
    // aggregate is erased. One transaction: the snapshot is never seen in between.
    const aggregate = [tenantId, s.aggregateId];
    await this.db.batch([
      { sql: 'UPDATE streams SET version = version WHERE tenant_id = ? AND aggregate_id = ?', params: aggregate },
      {
        sql: `INSERT INTO snapshots (tenant_id, aggregate_id, aggregate_type, binding_id, version, state, failed_version, error, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, aggregate_id) DO UPDATE SET binding_id = excluded.binding_id, version = excluded.version,
         state = excluded.state, failed_version = excluded.failed_version, error = excluded.error, updated_at = excluded.updated_at
       WHERE snapshots.binding_id <> excluded.binding_id OR snapshots.version < excluded.version`,
        params: [tenantId, s.aggregateId, s.aggregateType, s.bindingId, s.version, s.state, s.failedVersion, s.error, sqlTime(s.updatedAt)],
      },
      {
        sql: `DELETE FROM snapshots WHERE tenant_id = ? AND aggregate_id = ?
              AND EXISTS (SELECT 1 FROM streams e WHERE e.tenant_id = snapshots.tenant_id AND e.aggregate_id = snapshots.aggregate_id AND e.erased_at IS NOT NULL)`,
        params: aggregate,
      },
    ]);
  }

  async listAggregates(tenantId: string, aggregateType: string, afterAggregateId: string, limit: number) {
    const rows = await this.db.all<{ aggregate_id: string; version: number }>(
      `SELECT aggregate_id, version FROM streams WHERE tenant_id = ? AND aggregate_type = ? AND aggregate_id > ? AND erased_at IS NULL
       ORDER BY aggregate_id LIMIT ?`,
      [tenantId, aggregateType, afterAggregateId, limit],
    );
    return rows.map((r) => ({ aggregateId: r.aggregate_id, version: Number(r.version) }));
  }

  async listFailed(tenantId: string, aggregateType: string, bindingId: string, afterAggregateId: string, limit: number) {
    // The failed event by the events' unique (tenant, aggregate, version); the snapshots by their partial index.
    const rows = await this.db.all<FailedDbRow>(
      `SELECT s.aggregate_id, s.version, s.failed_version, s.error, s.updated_at, e.event_id, e.event_type
       FROM snapshots s LEFT JOIN events e ON e.tenant_id = s.tenant_id AND e.aggregate_id = s.aggregate_id AND e.version = s.failed_version
       WHERE s.tenant_id = ? AND s.aggregate_type = ? AND s.binding_id = ? AND s.failed_version IS NOT NULL AND s.aggregate_id > ?
       ORDER BY s.aggregate_id LIMIT ?`,
      [tenantId, aggregateType, bindingId, afterAggregateId, limit],
    );
    return rows.map(toFailed);
  }
}

interface FailedDbRow {
  aggregate_id: string;
  version: number | string;
  failed_version: number | string;
  error: string | null;
  updated_at: number | Date;
  event_id: string | null;
  event_type: string | null;
}

const toFailed = (r: FailedDbRow): FailedAggregate => ({
  aggregateId: r.aggregate_id,
  version: Number(r.version),
  failedVersion: Number(r.failed_version),
  // The keeper writes a failure and its error together; an empty one is shown as the generic failure.
  error: r.error ?? 'REDUCER_FAILED: the reducer failed',
  eventId: r.event_id,
  eventType: r.event_type,
  updatedAt: epochMs(r.updated_at),
});
