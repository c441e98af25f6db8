import { EVENT_COLUMNS, EventDbRow, toStoredEvent } from '../event-row';
import { logStateChanges } from '../sql-notification-repository';
import { SqlRunner, SqlStatement } from '../sql-runner';
import { LaneKey } from './lane-key';
import { AppliedChange, LaneWork } from './lane-records';
import { LaneFailure, LaneRuns } from './lane-runs.port';
import { heldFailure } from './lane-failure-text';
import { INSERT_LIVE_LANE, LANE_COLUMNS, VERSION_EXISTS, selectLane, toLane } from './sql-lane-rows';

const E_COLUMNS = EVENT_COLUMNS.split(',')
  .map((c) => `e.${c.trim()}`)
  .join(', ');

/** LaneRuns over SqlRunner, one implementation for both stores (see sql-runner.ts). */
export class SqlLaneRuns implements LaneRuns {
  constructor(
    private readonly db: SqlRunner,
    /**
     * For the writes of lane runs and routing (`applied`, `route`, `consume`): rows derived from
     * the log, each with its checkpoint (the lane's applied position, the version's routed
     * position) in the same transaction. The stores give these a durability class of their own
     * (SQLite: synchronous=NORMAL, PostgreSQL: synchronous_commit=off, on a pool of their own):
     * a crash of the machine may lose the last of them, checkpoint included, and the lanes then do
     * that work again from the log. Operator actions and leases stay on `db`. Issue 25, item 2.
     */
    private readonly derived: SqlRunner = db,
  ) {}

  async laneWork(ref: LaneKey, limit: number): Promise<LaneWork | null> {
    const { tenantId, versionId, key } = ref;
    // The version and the lane in one read: a run of a dropped version stops here.
    const [r] = await this.db.all<any>(
      `SELECT v.version_id AS live, ${LANE_COLUMNS.split(', ')
        .map((c) => `l.${c}`)
        .join(', ')} FROM projection_versions v
       LEFT JOIN lanes l ON l.tenant_id = v.tenant_id AND l.version_id = v.version_id AND l.state_key = ?
       WHERE v.tenant_id = ? AND v.version_id = ?`,
      [key, tenantId, versionId],
    );
    if (!r) return null;
    let lane = r.state_key === null || r.state_key === undefined ? null : toLane(r);
    if (!lane) {
      // Routing makes lane rows; a lane woken without one (an operator, a test) gets it now.
      await this.db.run(INSERT_LIVE_LANE, [key, tenantId, versionId]);
      lane = await selectLane(this.db, ref);
      if (!lane) return null; // dropped meanwhile
    }
    const rows = await this.db.all<EventDbRow>(
      `SELECT ${E_COLUMNS} FROM lane_inbox i JOIN events e ON e.tenant_id = i.tenant_id AND e.position = i.position
       WHERE i.tenant_id = ? AND i.version_id = ? AND i.state_key = ? AND i.position > ? ORDER BY i.position LIMIT ?`,
      [tenantId, versionId, key, lane.appliedPosition, limit],
    );
    return { lane, events: rows.map(toStoredEvent) };
  }

  async applied(lane: LaneKey, r: AppliedChange) {
    const { tenantId, versionId, key } = lane;
    const statements = this.appliedStatements(tenantId, versionId, key, r);
    try {
      return await this.derived.batch(statements);
    } catch (e) {
      // PostgreSQL: retention removed a state text this lane had just found (and it committed
      // first): nothing was kept; once more stores the text again.
      if (['23502', '23503'].includes((e as { code?: string }).code ?? '')) return this.derived.batch(statements);
      throw e;
    }
  }

  private appliedStatements(tenantId: string, versionId: string, key: string, r: AppliedChange): SqlStatement[] {
    return [
      // First, and the guard of the whole write: the checkpoint moves from where this run read it,
      // or another run of the lane stored first and this one keeps nothing (its row lock on
      // PostgreSQL also orders the two runs' notification logs).
      {
        // With a lease (several instances), also only while this run's instance still holds it.
        sql: `UPDATE lanes SET state = ?, applied_position = ?, updated_at = ?, attempts = 0
              WHERE tenant_id = ? AND version_id = ? AND state_key = ? AND applied_position = ? AND ${VERSION_EXISTS}
              ${r.leaseOwner === undefined ? '' : 'AND lease_owner = ?'}`,
        params: [
          r.state,
          r.appliedPosition,
          r.updatedAt,
          tenantId,
          versionId,
          key,
          r.fromPosition,
          ...(r.leaseOwner === undefined ? [] : [r.leaseOwner]),
        ],
        mustChange: true,
      },
      ...(r.notify?.changes.length ? logStateChanges(tenantId, versionId, key, r.notify.projectionId, r.notify.changes, Date.now()) : []),
      {
        sql: 'DELETE FROM lane_inbox WHERE tenant_id = ? AND version_id = ? AND state_key = ? AND position <= ?',
        params: [tenantId, versionId, key, r.appliedPosition],
      },
    ];
  }

  async consume(lane: LaneKey, position: number) {
    const { tenantId, versionId, key } = lane;
    await this.derived.batch([
      {
        sql: `UPDATE lanes SET applied_position = CASE WHEN applied_position > ? THEN applied_position ELSE ? END, attempts = 0
              WHERE tenant_id = ? AND version_id = ? AND state_key = ?`,
        params: [position, position, tenantId, versionId, key],
      },
      {
        sql: 'DELETE FROM lane_inbox WHERE tenant_id = ? AND version_id = ? AND state_key = ? AND position <= ?',
        params: [tenantId, versionId, key, position],
      },
    ]);
  }

  async failed(lane: LaneKey, r: LaneFailure) {
    const { tenantId, versionId, key } = lane;
    const hold = r.hold ? 1 : 0;
    const after = r.holdAfterAttempts ?? Number.MAX_SAFE_INTEGER;
    // In SET, `attempts` is the value before this update, on both engines.
    await this.db.run(
      `UPDATE lanes SET attempts = attempts + 1,
         held_position = CASE WHEN held_position IS NULL AND (? = 1 OR attempts + 1 >= ?) THEN ? ELSE held_position END,
         held_error = CASE WHEN held_position IS NULL AND (? = 1 OR attempts + 1 >= ?) THEN ? ELSE held_error END,
         held_failure = CASE WHEN held_position IS NULL AND (? = 1 OR attempts + 1 >= ?) THEN ? ELSE held_failure END
       WHERE tenant_id = ? AND version_id = ? AND state_key = ?`,
      [hold, after, r.position, hold, after, r.error.slice(0, 4000), hold, after, heldFailure(r), tenantId, versionId, key],
    );
    return (await selectLane(this.db, lane))?.attempts ?? 0;
  }

  async acquireLease(lane: LaneKey, owner: string, now: number, until: number) {
    const { tenantId, versionId, key } = lane;
    const take = () =>
      this.db.run(
        `UPDATE lanes SET lease_owner = ?, lease_until = ?
         WHERE tenant_id = ? AND version_id = ? AND state_key = ? AND (lease_until IS NULL OR lease_until < ? OR lease_owner = ?)`,
        [owner, until, tenantId, versionId, key, now, owner],
      );
    if ((await take()) > 0) return true;
    // No row yet (routing makes them; a lane woken before that gets one here), or another's lease.
    if (await selectLane(this.db, lane)) return false;
    await this.db.run(INSERT_LIVE_LANE, [key, tenantId, versionId]);
    return (await take()) > 0;
  }

  async renewLease(lane: LaneKey, owner: string, until: number) {
    const { tenantId, versionId, key } = lane;
    const changed = await this.db.run(
      `UPDATE lanes SET lease_until = ? WHERE tenant_id = ? AND version_id = ? AND state_key = ? AND lease_owner = ? AND lease_until IS NOT NULL`,
      [until, tenantId, versionId, key, owner],
    );
    return changed > 0;
  }

  async releaseLease(lane: LaneKey, owner: string) {
    const { tenantId, versionId, key } = lane;
    await this.db.run('UPDATE lanes SET lease_until = NULL WHERE tenant_id = ? AND version_id = ? AND state_key = ? AND lease_owner = ?', [
      tenantId,
      versionId,
      key,
      owner,
    ]);
  }
}
