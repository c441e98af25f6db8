import { SqlRunner } from '../sql-runner';
import { VersionGauges } from './lane-records';
import { LaneGauges } from './lane-gauges.port';
import { UNAPPLIED } from './sql-lane-rows';

/** LaneGauges over SqlRunner. */
export class SqlLaneGauges implements LaneGauges {
  constructor(private readonly db: SqlRunner) {}

  async versionGauges(): Promise<VersionGauges[]> {
    // The applied position as lag() and ProjectionReader.lag count it: just before the oldest inbox row, at most the routed position.
    const applied = 'CASE WHEN i.oldest IS NOT NULL AND i.oldest - 1 < v.routed_position THEN i.oldest - 1 ELSE v.routed_position END';
    const rows = await this.db.all<any>(
      `SELECT v.tenant_id, v.projection_id, v.version_id,
              CASE WHEN p.active_version = v.version_id THEN 'active' ELSE 'pending' END AS role,
              COALESCE(h.position, 0) AS head_position, v.routed_position, ${applied} AS applied_position,
              COALESCE(i.depth, 0) AS inbox_rows, COALESCE(l.lanes, 0) AS lanes, COALESCE(l.held, 0) AS held,
              COALESCE(n.last_sequence, 0) AS notification_head,
              (SELECT e.created_at FROM events e WHERE e.tenant_id = v.tenant_id AND e.position > ${applied}
               ORDER BY e.position LIMIT 1) AS oldest_at
       FROM projections p
       JOIN projection_versions v ON v.tenant_id = p.tenant_id AND v.version_id IN (p.active_version, p.pending_version)
       LEFT JOIN tenant_heads h ON h.tenant_id = v.tenant_id
       LEFT JOIN (SELECT i.tenant_id, i.version_id, count(*) AS depth, min(i.position) AS oldest FROM lane_inbox i
                  WHERE ${UNAPPLIED('i')} GROUP BY i.tenant_id, i.version_id) i
         ON i.tenant_id = v.tenant_id AND i.version_id = v.version_id
       LEFT JOIN (SELECT tenant_id, version_id, count(*) AS lanes, count(held_position) AS held FROM lanes
                  WHERE state IS NOT NULL OR held_position IS NOT NULL GROUP BY tenant_id, version_id) l
         ON l.tenant_id = v.tenant_id AND l.version_id = v.version_id
       LEFT JOIN notification_heads n ON n.tenant_id = p.tenant_id AND n.projection_id = p.projection_id
       ORDER BY v.tenant_id, v.projection_id, v.version_id`,
      [],
    );
    return rows.map((r) => ({
      tenantId: r.tenant_id,
      projectionId: r.projection_id,
      versionId: r.version_id,
      role: r.role,
      headPosition: Number(r.head_position),
      routedPosition: Number(r.routed_position),
      appliedPosition: Number(r.applied_position),
      inboxRows: Number(r.inbox_rows),
      heldLanes: Number(r.held),
      laneCount: Number(r.lanes),
      oldestUnappliedAt:
        r.oldest_at === null || r.oldest_at === undefined
          ? null
          : r.oldest_at instanceof Date
            ? r.oldest_at.getTime()
            : Number(r.oldest_at),
      notificationHead: Number(r.notification_head),
    }));
  }
}
