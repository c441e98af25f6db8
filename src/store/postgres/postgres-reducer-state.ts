import { Pool } from 'pg';
import { Snapshot } from '../event-log.port';
import { Binding, BindingRepository, SnapshotRepository } from '../reducer-state.port';
import { BindingDbRow, SNAPSHOT_COLUMNS, SnapshotDbRow, toBinding, toSnapshot } from '../snapshot-row';

export class PostgresBindingRepository implements BindingRepository {
  constructor(private readonly pool: Pool) {}

  async put(b: Binding): Promise<void> {
    await this.pool.query(
      `INSERT INTO bindings (tenant_id, aggregate_type, reducer_id, class_name, binding_id, bound_at) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (tenant_id, aggregate_type) DO UPDATE SET reducer_id = EXCLUDED.reducer_id, class_name = EXCLUDED.class_name,
         binding_id = EXCLUDED.binding_id, bound_at = EXCLUDED.bound_at`,
      [b.tenantId, b.aggregateType, b.reducerId, b.className, b.bindingId, new Date(b.boundAt)],
    );
  }

  async get(tenantId: string, aggregateType: string): Promise<Binding | null> {
    const { rows } = await this.pool.query<BindingDbRow>('SELECT * FROM bindings WHERE tenant_id = $1 AND aggregate_type = $2', [
      tenantId,
      aggregateType,
    ]);
    return rows[0] ? toBinding(rows[0]) : null;
  }
}

export class PostgresSnapshotRepository implements SnapshotRepository {
  constructor(private readonly pool: Pool) {}

  async get(tenantId: string, aggregateId: string): Promise<Snapshot | null> {
    const { rows } = await this.pool.query<SnapshotDbRow>({
      name: 'es_snapshot',
      text: `SELECT ${SNAPSHOT_COLUMNS} FROM snapshots WHERE tenant_id = $1 AND aggregate_id = $2`,
      values: [tenantId, aggregateId],
    });
    return rows[0] ? toSnapshot(rows[0]) : null;
  }

  async putIfNewer(tenantId: string, s: Snapshot): Promise<void> {
    await this.pool.query(
      `INSERT INTO snapshots (tenant_id, aggregate_id, aggregate_type, binding_id, version, state, failed_version, error, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (tenant_id, aggregate_id) DO UPDATE SET binding_id = EXCLUDED.binding_id, version = EXCLUDED.version,
         state = EXCLUDED.state, failed_version = EXCLUDED.failed_version, error = EXCLUDED.error, updated_at = EXCLUDED.updated_at
       WHERE snapshots.binding_id <> EXCLUDED.binding_id OR snapshots.version < EXCLUDED.version`,
      [tenantId, s.aggregateId, s.aggregateType, s.bindingId, s.version, s.state, s.failedVersion, s.error, new Date(s.updatedAt)],
    );
  }

  async listAggregates(tenantId: string, aggregateType: string, afterAggregateId: string, limit: number) {
    const { rows } = await this.pool.query<{ aggregate_id: string; version: number }>(
      `SELECT aggregate_id, version FROM streams WHERE tenant_id = $1 AND aggregate_type = $2 AND aggregate_id > $3 ORDER BY aggregate_id LIMIT $4`,
      [tenantId, aggregateType, afterAggregateId, limit],
    );
    return rows.map((r) => ({ aggregateId: r.aggregate_id, version: Number(r.version) }));
  }
}
