import { SqlRunner } from '../sql-runner';
import { LaneHolds } from './lane-holds.port';
import { LaneKey } from './lane-key';
import { selectLane } from './sql-lane-rows';

/** LaneHolds over SqlRunner: an operator's writes, committed synchronously on the lanes' connections. */
export class SqlLaneHolds implements LaneHolds {
  constructor(private readonly db: SqlRunner) {}

  getLane(lane: LaneKey) {
    return selectLane(this.db, lane);
  }

  async release(lane: LaneKey) {
    const { tenantId, versionId, key } = lane;
    const changed = await this.db.run(
      'UPDATE lanes SET held_position = NULL, held_error = NULL, held_failure = NULL, attempts = 0 WHERE tenant_id = ? AND version_id = ? AND state_key = ? AND held_position IS NOT NULL',
      [tenantId, versionId, key],
    );
    return changed > 0;
  }

  async skip(ref: LaneKey) {
    const { tenantId, versionId, key } = ref;
    const lane = await selectLane(this.db, ref);
    if (!lane || lane.heldPosition === null) return false;
    await this.db.batch([
      {
        // The held event and anything before it (spent rows: a lane's inbox holds none at or below its position).
        sql: 'DELETE FROM lane_inbox WHERE tenant_id = ? AND version_id = ? AND state_key = ? AND position <= ?',
        params: [tenantId, versionId, key, lane.heldPosition],
      },
      {
        sql: `UPDATE lanes SET held_position = NULL, held_error = NULL, held_failure = NULL, attempts = 0,
                applied_position = CASE WHEN applied_position > ? THEN applied_position ELSE ? END
              WHERE tenant_id = ? AND version_id = ? AND state_key = ?`,
        params: [lane.heldPosition, lane.heldPosition, tenantId, versionId, key],
      },
    ]);
    return true;
  }
}
