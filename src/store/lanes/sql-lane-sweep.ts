import { DroppedVersion } from '../projection-catalog.port';
import { toVersion } from '../projection-rows';
import { SqlRunner } from '../sql-runner';
import { LaneVersion } from './lane-key';
import { SweepCandidate } from './lane-records';
import { LaneSweep } from './lane-sweep.port';
import { UNAPPLIED } from './sql-lane-rows';

/** LaneSweep over SqlRunner: all tenants' versions in one statement per question. */
export class SqlLaneSweep implements LaneSweep {
  constructor(private readonly db: SqlRunner) {}

  async sweepCandidates(): Promise<{ live: SweepCandidate[]; dropped: DroppedVersion[] }> {
    const inbox = 'EXISTS (SELECT 1 FROM lane_inbox i WHERE i.tenant_id = v.tenant_id AND i.version_id = v.version_id)';
    // Tombstones ride along in the same statement (a union with the same columns, told apart by
    // `kind`): the sweep stays one statement however many tenants are idle.
    const rows = await this.db.all<any>(
      `SELECT 'live' AS kind, v.tenant_id, v.version_id, v.projection_id, v.class_name, v.target_position, v.routed_position, v.caught_up_at, v.created_at,
              COALESCE(h.position, 0) AS head_position, CASE WHEN ${inbox} THEN 1 ELSE 0 END AS has_inbox
       FROM projections p
       JOIN projection_versions v ON v.tenant_id = p.tenant_id AND v.version_id IN (p.active_version, p.pending_version)
       LEFT JOIN tenant_heads h ON h.tenant_id = v.tenant_id
       WHERE v.routed_position < COALESCE(h.position, 0) OR v.caught_up_at IS NULL OR ${inbox}
       UNION ALL
       SELECT 'dropped', d.tenant_id, d.version_id, NULL, NULL, 0, 0, NULL, d.dropped_at, 0, 0 FROM dropped_versions d`,
      [],
    );
    const live = rows.filter((r) => r.kind === 'live');
    return {
      live: live.map((r) => ({
        version: toVersion(r),
        behindHead: Number(r.routed_position) < Number(r.head_position),
        hasInbox: Number(r.has_inbox) === 1,
      })),
      dropped: rows
        .filter((r) => r.kind === 'dropped')
        .map((r) => ({ tenantId: r.tenant_id, versionId: r.version_id, droppedAt: Number(r.created_at) })),
    };
  }

  async lanesWithWork(version: LaneVersion, limit: number) {
    const { tenantId, versionId } = version;
    const rows = await this.db.all<{ state_key: string }>(
      `SELECT DISTINCT i.state_key FROM lane_inbox i
       LEFT JOIN lanes l ON l.tenant_id = i.tenant_id AND l.version_id = i.version_id AND l.state_key = i.state_key
       WHERE i.tenant_id = ? AND i.version_id = ? AND l.held_position IS NULL AND i.position > COALESCE(l.applied_position, 0) LIMIT ?`,
      [tenantId, versionId, limit],
    );
    return rows.map((r) => r.state_key);
  }

  async purgeSpent(version: LaneVersion) {
    const { tenantId, versionId } = version;
    return this.db.run(`DELETE FROM lane_inbox WHERE tenant_id = ? AND version_id = ? AND NOT ${UNAPPLIED('lane_inbox')}`, [
      tenantId,
      versionId,
    ]);
  }

  async hasUnappliedUpTo(version: LaneVersion, position: number) {
    const { tenantId, versionId } = version;
    const rows = await this.db.all(
      `SELECT 1 AS x FROM lane_inbox i
       LEFT JOIN lanes l ON l.tenant_id = i.tenant_id AND l.version_id = i.version_id AND l.state_key = i.state_key
       WHERE i.tenant_id = ? AND i.version_id = ? AND i.position <= ? AND l.held_position IS NULL
         AND i.position > COALESCE(l.applied_position, 0) LIMIT 1`,
      [tenantId, versionId, position],
    );
    return rows.length > 0;
  }

  async dropVersion(version: LaneVersion) {
    const { tenantId, versionId } = version;
    await this.db.batch([
      { sql: 'DELETE FROM lane_inbox WHERE tenant_id = ? AND version_id = ?', params: [tenantId, versionId] },
      { sql: 'DELETE FROM lanes WHERE tenant_id = ? AND version_id = ?', params: [tenantId, versionId] },
      { sql: 'DELETE FROM projection_versions WHERE tenant_id = ? AND version_id = ?', params: [tenantId, versionId] },
    ]);
  }

  async orphanRows() {
    const live = (t: string) =>
      `NOT EXISTS (SELECT 1 FROM projections p WHERE p.tenant_id = ${t}.tenant_id AND (p.active_version = ${t}.version_id OR p.pending_version = ${t}.version_id))`;
    const rows = await this.db.all<{ tenant_id: string; version_id: string; lanes: number; inbox: number }>(
      `SELECT tenant_id, version_id, SUM(lanes) AS lanes, SUM(inbox) AS inbox FROM (
         SELECT l.tenant_id, l.version_id, COUNT(*) AS lanes, 0 AS inbox FROM lanes l WHERE ${live('l')} GROUP BY l.tenant_id, l.version_id
         UNION ALL
         SELECT i.tenant_id, i.version_id, 0 AS lanes, COUNT(*) AS inbox FROM lane_inbox i WHERE ${live('i')} GROUP BY i.tenant_id, i.version_id
       ) o GROUP BY tenant_id, version_id ORDER BY tenant_id, version_id`,
      [],
    );
    return {
      lanes: rows.reduce((a, r) => a + Number(r.lanes), 0),
      inboxRows: rows.reduce((a, r) => a + Number(r.inbox), 0),
      versions: rows.map((r) => ({ tenantId: r.tenant_id, versionId: r.version_id })),
    };
  }
}
