import { nullableNumber } from '../projection-rows';
import { SqlRunner } from '../sql-runner';
import { LaneKey, LaneVersion } from './lane-key';
import { VersionLag } from './lane-records';
import { LaneReads } from './lane-reads.port';
import { LANE_COLUMNS, UNAPPLIED, selectLane, toLane } from './sql-lane-rows';

/** LaneReads over SqlRunner (PostgreSQL: the ordinary pool, see Store.lanes). */
export class SqlLaneReads implements LaneReads {
  constructor(private readonly db: SqlRunner) {}

  getLane(lane: LaneKey) {
    return selectLane(this.db, lane);
  }

  async nextInboxPosition(lane: LaneKey, after: number) {
    const { tenantId, versionId, key } = lane;
    const [r] = await this.db.all<{ p: number | null }>(
      'SELECT min(position) AS p FROM lane_inbox WHERE tenant_id = ? AND version_id = ? AND state_key = ? AND position > ?',
      [tenantId, versionId, key, after],
    );
    return nullableNumber(r?.p);
  }

  async listLanes(version: LaneVersion, opts: { afterKey: string; limit: number; heldOnly?: boolean }) {
    const { tenantId, versionId } = version;
    const rows = await this.db.all(
      `SELECT ${LANE_COLUMNS} FROM lanes WHERE tenant_id = ? AND version_id = ? AND state_key > ?
       ${opts.heldOnly ? 'AND held_position IS NOT NULL' : 'AND state IS NOT NULL'} ORDER BY state_key LIMIT ?`,
      [tenantId, versionId, opts.afterKey, opts.limit],
    );
    return rows.map(toLane);
  }

  async lag(version: LaneVersion): Promise<VersionLag> {
    const { tenantId, versionId } = version;
    // Unapplied rows only: a spent row (at or below its lane's position) left by anything is not lag.
    const [inbox] = await this.db.all<{ depth: number; oldest: number | null }>(
      `SELECT count(*) AS depth, min(i.position) AS oldest FROM lane_inbox i WHERE i.tenant_id = ? AND i.version_id = ? AND ${UNAPPLIED('i')}`,
      [tenantId, versionId],
    );
    const [lanes] = await this.db.all<{ lanes: number; held: number }>(
      'SELECT count(*) AS lanes, count(held_position) AS held FROM lanes WHERE tenant_id = ? AND version_id = ? AND (state IS NOT NULL OR held_position IS NOT NULL)',
      [tenantId, versionId],
    );
    return {
      inboxDepth: Number(inbox.depth),
      heldLanes: Number(lanes.held),
      laneCount: Number(lanes.lanes),
      oldestUnapplied: nullableNumber(inbox.oldest),
    };
  }

  async oldestUnapplied(version: LaneVersion): Promise<number | null> {
    const { tenantId, versionId } = version;
    const [row] = await this.db.all<{ position: number }>(
      `SELECT i.position FROM lane_inbox i WHERE i.tenant_id = ? AND i.version_id = ? AND ${UNAPPLIED('i')} ORDER BY i.position LIMIT 1`,
      [tenantId, versionId],
    );
    return row ? Number(row.position) : null;
  }
}
