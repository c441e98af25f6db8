import { groupBy } from '../../common/group-by';
import { IN_CHUNK } from '../projection-rows';
import { lockedForShare } from '../sql-dialect';
import { SqlRunner, SqlStatement } from '../sql-runner';
import { LaneInbox } from './lane-inbox.port';
import { LaneVersion } from './lane-key';
import { InboxItem, VersionRoute } from './lane-records';
import { COUNTED_LANE } from './sql-lane-rows';

/**
 * LaneInbox over SqlRunner, one implementation for both stores (see sql-runner.ts): inbox rows and
 * a version's routed_position (moved with the inbox rows it covers), the version row read or
 * guarded in the write's own transaction to refuse a dropped version.
 */
export class SqlLaneInbox implements LaneInbox {
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

  async route(version: LaneVersion, items: InboxItem[], routedPosition: number) {
    const { tenantId, versionId } = version;
    return this.derived.batch(this.routeStatements(tenantId, [{ versionId, items, routedPosition }]));
  }

  async routeMany(tenantId: string, routes: VersionRoute[]): Promise<string[]> {
    if (routes.length === 0) return [];
    // One transaction for all (the usual case); a version dropped meanwhile fails it whole, and
    // then each goes on its own so that only the dropped one is refused.
    if (await this.derived.batch(this.routeStatements(tenantId, routes))) return [];
    const gone: string[] = [];
    for (const r of routes)
      if (!(await this.route({ tenantId, versionId: r.versionId }, r.items, r.routedPosition))) gone.push(r.versionId);
    return gone;
  }

  /**
   * Set-based, whatever the number of versions: one guarded UPDATE per routed position (the
   * caught-up versions of a tenant all share one), then every version's inbox rows and new lanes in
   * multi-row INSERTs. Per-version statements made routing 200 versions ~600 statements, a writer
   * block an append waited behind.
   */

  private routeStatements(tenantId: string, routes: VersionRoute[]): SqlStatement[] {
    const stmts: SqlStatement[] = [];
    // First, and the guard of the whole write: every version still exists (their row locks on
    // PostgreSQL make a concurrent drop wait for this commit, whose rows the drop's purge removes).
    for (const [position, sameRoutes] of groupBy(routes, (r) => r.routedPosition)) {
      const ids = sameRoutes.map((r) => r.versionId);
      for (let i = 0; i < ids.length; i += IN_CHUNK) {
        const chunk = ids.slice(i, i + IN_CHUNK);
        stmts.push({
          sql: `UPDATE projection_versions SET routed_position = CASE WHEN routed_position > ? THEN routed_position ELSE ? END
                WHERE tenant_id = ? AND version_id IN (${chunk.map(() => '?').join(', ')})`,
          params: [position, position, tenantId, ...chunk],
          mustChange: chunk.length,
        });
      }
    }
    // The lanes' rows are made here, once, rather than by every lane run (a write each); and
    // share-locked (PostgreSQL) before the inbox rows go in, for the rule below.
    const lanes = routes.flatMap((r) => [...new Set(r.items.map((it) => it.key))].map((key) => [r.versionId, key]));
    for (let i = 0; i < lanes.length; i += IN_CHUNK) {
      const chunk = lanes.slice(i, i + IN_CHUNK);
      stmts.push({
        sql: `INSERT INTO lanes (tenant_id, version_id, state_key) VALUES ${chunk.map(() => '(?, ?, ?)').join(', ')} ON CONFLICT DO NOTHING`,
        params: chunk.flatMap((l) => [tenantId, ...l]),
      });
      stmts.push(
        ...lockedForShare(this.db.dialect, {
          sql: `SELECT 1 FROM lanes WHERE tenant_id = ? AND (version_id, state_key) IN (VALUES ${chunk.map(() => '(?, ?)').join(', ')})`,
          params: [tenantId, ...chunk.flat()],
        }),
      );
    }
    // An inbox row is consumed once: one at or below its lane's applied position is never put
    // back. Two instances route the same events when their routers read the log at once; the
    // later one's rows used to come back after the lane had applied and deleted them, and stayed
    // for ever, counted as lag (issue 23). The filter reads the lane's position in the same
    // statement; under READ COMMITTED that alone could still read a position a lane run is
    // moving (uncommitted) and insert rows its DELETE cannot see, so the lanes' rows are first
    // share-locked above: a lane run that committed before the lock is seen by this statement
    // (it starts after the lock was granted), and one that comes after waits for this commit, so
    // its DELETE (a statement of its own, after its UPDATE waited) sees and removes these rows.
    const inbox = routes.flatMap((r) => r.items.map((it) => [r.versionId, it.key, it.position]));
    for (let i = 0; i < inbox.length; i += IN_CHUNK) {
      const chunk = inbox.slice(i, i + IN_CHUNK);
      stmts.push({
        sql: `INSERT INTO lane_inbox (tenant_id, version_id, state_key, position)
              SELECT CAST(? AS TEXT), c.column1, c.column2, c.column3
              FROM (VALUES ${chunk.map(() => '(CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT))').join(', ')}) AS c
              WHERE NOT EXISTS (SELECT 1 FROM lanes l
                                WHERE l.tenant_id = ? AND l.version_id = c.column1 AND l.state_key = c.column2 AND l.applied_position >= c.column3)
              ON CONFLICT DO NOTHING`,
        params: [tenantId, ...chunk.flat(), tenantId],
      });
    }
    return stmts;
  }

  async existingKeys(version: LaneVersion, keys: string[]) {
    const { tenantId, versionId } = version;
    const found = new Set<string>();
    for (let i = 0; i < keys.length; i += IN_CHUNK) {
      const chunk = keys.slice(i, i + IN_CHUNK);
      const rows = await this.db.all<{ state_key: string }>(
        `SELECT state_key FROM lanes WHERE tenant_id = ? AND version_id = ? AND state_key IN (${chunk.map(() => '?').join(', ')})
         AND ${COUNTED_LANE}`,
        [tenantId, versionId, ...chunk],
      );
      for (const r of rows) found.add(r.state_key);
    }
    return found;
  }

  async keyCount(version: LaneVersion) {
    const { tenantId, versionId } = version;
    const [r] = await this.db.all<{ n: number }>(
      `SELECT count(*) AS n FROM lanes WHERE tenant_id = ? AND version_id = ? AND ${COUNTED_LANE}`,
      [tenantId, versionId],
    );
    return Number(r?.n ?? 0);
  }
}
