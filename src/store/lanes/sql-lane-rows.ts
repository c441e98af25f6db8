import { nullableNumber } from '../projection-rows';
import { SqlRunner } from '../sql-runner';
import { LaneKey } from './lane-key';
import { LaneRecord } from './lane-records';

/** What the SQL lane roles (sql-lane-*.ts) share: the lane row's columns and the statements several of them use. */

export const LANE_COLUMNS = 'state_key, state, applied_position, updated_at, held_position, held_error, held_failure, attempts';

export function toLane(r: any): LaneRecord {
  return {
    key: r.state_key,
    state: r.state,
    appliedPosition: Number(r.applied_position),
    updatedAt: nullableNumber(r.updated_at),
    heldPosition: nullableNumber(r.held_position),
    heldError: r.held_error,
    heldFailure: r.held_failure ?? null,
    attempts: Number(r.attempts),
  };
}

/** A lane row for a version that still exists (a lane of a dropped version is never made again). */
export const INSERT_LIVE_LANE = `INSERT INTO lanes (tenant_id, version_id, state_key)
  SELECT tenant_id, version_id, CAST(? AS TEXT) FROM projection_versions WHERE tenant_id = ? AND version_id = ? ON CONFLICT DO NOTHING`;
export const VERSION_EXISTS =
  'EXISTS (SELECT 1 FROM projection_versions v WHERE v.tenant_id = lanes.tenant_id AND v.version_id = lanes.version_id)';
/** An inbox row `i` its lane has not applied yet: what lag, work and sweeps count (a row at or below the lane's position is spent). */
export const UNAPPLIED = (i: string) => `${i}.position > COALESCE((SELECT l.applied_position FROM lanes l
  WHERE l.tenant_id = ${i}.tenant_id AND l.version_id = ${i}.version_id AND l.state_key = ${i}.state_key), 0)`;

/**
 * A lane of `lanes` the `keysPerProjection` limit counts (not `!unresolved`): one with a state, one not
 * applied yet (a new key), or one with events still to apply. A key whose state its projection removed
 * (IDeletableProjection: state NULL past its first event) and that has nothing left to apply is not
 * counted; its row stays, since routing reads its checkpoint to ignore an event routed twice, and the key
 * counts again once an event of it is routed (on every instance alike: the count is the store's).
 */
export const COUNTED_LANE = `lanes.state_key <> '!unresolved' AND (lanes.state IS NOT NULL OR lanes.applied_position = 0
  OR EXISTS (SELECT 1 FROM lane_inbox i WHERE i.tenant_id = lanes.tenant_id AND i.version_id = lanes.version_id
             AND i.state_key = lanes.state_key AND i.position > lanes.applied_position))`;

/** One lane's row, or null. */
export async function selectLane(db: SqlRunner, lane: LaneKey): Promise<LaneRecord | null> {
  const { tenantId, versionId, key } = lane;
  const [r] = await db.all(`SELECT ${LANE_COLUMNS} FROM lanes WHERE tenant_id = ? AND version_id = ? AND state_key = ?`, [
    tenantId,
    versionId,
    key,
  ]);
  return r ? toLane(r) : null;
}
