import { DeployRequest, ProjectionCatalogRepository, ProjectionRecord, ProjectionVersion } from './projection-catalog.port';
import { IN_CHUNK, toVersion } from './projection-rows';
import { forgetUnreferencedStates } from './sql-notification-repository';
import { SqlRunner, SqlStatement } from './sql-runner';

function toProjection(r: any): ProjectionRecord {
  return {
    tenantId: r.tenant_id,
    projectionId: r.projection_id,
    name: r.name,
    activeVersion: r.active_version,
    pendingVersion: r.pending_version,
    createdAt: Number(r.created_at),
    notifyConfig: r.notify_config ?? null,
  };
}

/**
 * Drops the versions `where` selects: tombstone first, then the row, in the caller's batch. From
 * its commit on, route/laneWork/applied of any instance find the version gone.
 */
function dropVersionRows(where: string, params: unknown[], now: number): SqlStatement[] {
  return [
    {
      sql: `INSERT INTO dropped_versions (tenant_id, version_id, dropped_at)
            SELECT tenant_id, version_id, CAST(? AS BIGINT) FROM projection_versions WHERE ${where} ON CONFLICT DO NOTHING`,
      params: [now, ...params],
    },
    { sql: `DELETE FROM projection_versions WHERE ${where}`, params },
  ];
}

/**
 * The projection catalog over SqlRunner, one implementation for both stores (see sql-runner.ts).
 * Its tables: projections, projection_versions, dropped_versions; a drop never touches the lanes
 * (SqlLaneSweep purges them later, and refuses their writes from the drop's commit on).
 */
export class SqlProjectionCatalogRepository implements ProjectionCatalogRepository {
  constructor(private readonly db: SqlRunner) {}

  async getByName(tenantId: string, name: string) {
    const [r] = await this.db.all('SELECT * FROM projections WHERE tenant_id = ? AND name = ?', [tenantId, name]);
    return r ? toProjection(r) : null;
  }

  async get(tenantId: string, projectionId: string) {
    const [r] = await this.db.all('SELECT * FROM projections WHERE tenant_id = ? AND projection_id = ?', [tenantId, projectionId]);
    return r ? toProjection(r) : null;
  }

  async list(tenantId: string) {
    return (await this.db.all('SELECT * FROM projections WHERE tenant_id = ? ORDER BY name', [tenantId])).map(toProjection);
  }

  async deploy(p: DeployRequest): Promise<ProjectionRecord> {
    const v = p.version;
    const insertVersion: SqlStatement = {
      sql: `INSERT INTO projection_versions (tenant_id, version_id, projection_id, class_name, target_position, routed_position, created_at)
            VALUES (?, ?, ?, ?, ?, 0, ?)`,
      params: [p.tenantId, v.versionId, v.projectionId, v.className, v.targetPosition, v.createdAt],
    };
    const existing = await this.getByName(p.tenantId, p.name);
    const config = p.notifyConfig ?? null;
    const webhookUrl = p.webhookUrl ?? null;
    if (existing) {
      const scope = [p.tenantId, existing.projectionId];
      const kept = await this.db.batch([
        // First: the projection still exists (else this is a first deploy again), and its row is
        // locked (PostgreSQL), so the pending version dropped below is the one being replaced.
        {
          sql: 'UPDATE projections SET pending_version = pending_version WHERE tenant_id = ? AND projection_id = ?',
          params: scope,
          mustChange: true,
        },
        ...dropVersionRows(
          'tenant_id = ? AND version_id = (SELECT pending_version FROM projections WHERE tenant_id = ? AND projection_id = ?)',
          [p.tenantId, ...scope],
          Date.now(),
        ),
        insertVersion,
        {
          sql: 'UPDATE projections SET pending_version = ?, notify_config = ?, webhook_url = ? WHERE tenant_id = ? AND projection_id = ?',
          params: [v.versionId, config, webhookUrl, ...scope],
        },
      ]);
      if (!kept) return this.deploy(p); // deleted meanwhile
    } else {
      await this.db.batch([
        insertVersion,
        {
          sql: `INSERT INTO projections (tenant_id, projection_id, name, active_version, pending_version, created_at, notify_config, webhook_url)
                VALUES (?, ?, ?, ?, NULL, ?, ?, ?)`,
          params: [p.tenantId, p.projectionId, p.name, v.versionId, v.createdAt, config, webhookUrl],
        },
        {
          sql: 'INSERT INTO notification_heads (tenant_id, projection_id) VALUES (?, ?) ON CONFLICT DO NOTHING',
          params: [p.tenantId, p.projectionId],
        },
      ]);
    }
    return (await this.getByName(p.tenantId, p.name))!;
  }

  async getVersion(tenantId: string, versionId: string) {
    const [r] = await this.db.all('SELECT * FROM projection_versions WHERE tenant_id = ? AND version_id = ?', [tenantId, versionId]);
    return r ? toVersion(r) : null;
  }

  async versionsOf(tenantId: string, versionIds: string[]) {
    const out: ProjectionVersion[] = [];
    for (let i = 0; i < versionIds.length; i += IN_CHUNK) {
      const chunk = versionIds.slice(i, i + IN_CHUNK);
      const rows = await this.db.all(
        `SELECT * FROM projection_versions WHERE tenant_id = ? AND version_id IN (${chunk.map(() => '?').join(', ')})`,
        [tenantId, ...chunk],
      );
      out.push(...rows.map(toVersion));
    }
    return out;
  }

  async liveVersions() {
    const rows = await this.db.all(
      `SELECT v.* FROM projection_versions v JOIN projections p ON p.tenant_id = v.tenant_id
       AND (p.active_version = v.version_id OR p.pending_version = v.version_id)`,
      [],
    );
    return rows.map(toVersion);
  }

  async markCaughtUp(tenantId: string, versionId: string, at: number) {
    await this.db.run('UPDATE projection_versions SET caught_up_at = ? WHERE tenant_id = ? AND version_id = ? AND caught_up_at IS NULL', [
      at,
      tenantId,
      versionId,
    ]);
  }

  async promote(tenantId: string, projectionId: string, versionId: string) {
    const p = await this.get(tenantId, projectionId);
    if (!p || p.pendingVersion !== versionId) return null;
    const kept = await this.db.batch([
      {
        sql: 'UPDATE projections SET active_version = pending_version, pending_version = NULL WHERE tenant_id = ? AND projection_id = ? AND pending_version = ?',
        params: [tenantId, projectionId, versionId],
        mustChange: true,
      },
      ...(p.activeVersion ? dropVersionRows('tenant_id = ? AND version_id = ?', [tenantId, p.activeVersion], Date.now()) : []),
    ]);
    // Another instance promoted it first: its caller retires the old version, not this one.
    return kept ? p.activeVersion : null;
  }

  async delete(tenantId: string, projectionId: string) {
    const p = await this.get(tenantId, projectionId);
    if (!p) return null;
    const scope = 'tenant_id = ? AND projection_id = ?';
    const versions = await this.db.all<{ version_id: string }>(`SELECT version_id FROM projection_versions WHERE ${scope}`, [
      tenantId,
      projectionId,
    ]);
    const states = await this.db.all<{ state_id: number }>(`SELECT DISTINCT state_id FROM notifications WHERE ${scope}`, [
      tenantId,
      projectionId,
    ]);
    // The deletion is written first, whole: routers and lanes of every instance then find it.
    const kept = await this.db.batch([
      { sql: `DELETE FROM projections WHERE ${scope}`, params: [tenantId, projectionId], mustChange: true },
      ...dropVersionRows(scope, [tenantId, projectionId], Date.now()),
      ...['notification_heads', 'notifications', 'webhook_deliveries', 'webhook_suspensions'].map((t) => ({
        sql: `DELETE FROM ${t} WHERE ${scope}`,
        params: [tenantId, projectionId],
      })),
      { sql: 'DELETE FROM webhook_secrets WHERE tenant_id = ? AND scope = ?', params: [tenantId, projectionId] },
    ]);
    if (!kept) return null; // deleted by another request meanwhile
    // State texts no notification refers to any more (a text may be shared with another projection's log).
    await forgetUnreferencedStates(
      this.db,
      tenantId,
      states.map((r) => Number(r.state_id)),
    );
    return [
      ...new Set([...versions.map((v) => v.version_id), ...[p.activeVersion, p.pendingVersion].filter((v): v is string => v !== null)]),
    ];
  }

  async forgetDropped(tenantId: string, versionId: string) {
    await this.db.run('DELETE FROM dropped_versions WHERE tenant_id = ? AND version_id = ?', [tenantId, versionId]);
  }
}
