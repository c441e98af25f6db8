import { groupBy } from '../common/group-by';
import { EVENT_COLUMNS, EventDbRow, toStoredEvent } from './event-row';
import {
  AppliedChange,
  InboxItem,
  LaneRecord,
  LaneStore,
  LaneWork,
  SweepCandidate,
  VersionGauges,
  VersionLag,
  VersionRoute,
} from './lane-store.port';
import { DroppedVersion } from './projection-catalog.port';
import { IN_CHUNK, nullableNumber, toVersion } from './projection-rows';
import { lockedForShare } from './sql-dialect';
import { logStateChanges } from './sql-notification-repository';
import { SqlRunner, SqlStatement } from './sql-runner';

const E_COLUMNS = EVENT_COLUMNS.split(',')
  .map((c) => `e.${c.trim()}`)
  .join(', ');
const LANE_COLUMNS = 'state_key, state, applied_position, updated_at, held_position, held_error, attempts';

function toLane(r: any): LaneRecord {
  return {
    key: r.state_key,
    state: r.state,
    appliedPosition: Number(r.applied_position),
    updatedAt: nullableNumber(r.updated_at),
    heldPosition: nullableNumber(r.held_position),
    heldError: r.held_error,
    attempts: Number(r.attempts),
  };
}

/** A lane row for a version that still exists (a lane of a dropped version is never made again). */
const INSERT_LIVE_LANE = `INSERT INTO lanes (tenant_id, version_id, state_key)
  SELECT tenant_id, version_id, CAST(? AS TEXT) FROM projection_versions WHERE tenant_id = ? AND version_id = ? ON CONFLICT DO NOTHING`;
const VERSION_EXISTS =
  'EXISTS (SELECT 1 FROM projection_versions v WHERE v.tenant_id = lanes.tenant_id AND v.version_id = lanes.version_id)';
/** An inbox row `i` its lane has not applied yet: what lag, work and sweeps count (a row at or below the lane's position is spent). */
const UNAPPLIED = (i: string) => `${i}.position > COALESCE((SELECT l.applied_position FROM lanes l
  WHERE l.tenant_id = ${i}.tenant_id AND l.version_id = ${i}.version_id AND l.state_key = ${i}.state_key), 0)`;

/**
 * The lane store over SqlRunner, one implementation for both stores (see sql-runner.ts). Its
 * tables: lanes, lane_inbox, and a version's routed_position (moved with the inbox rows it covers);
 * it reads the catalog's version rows in its writes' own transactions to refuse a dropped version.
 */
export class SqlLaneStore implements LaneStore {
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

  async route(tenantId: string, versionId: string, items: InboxItem[], routedPosition: number) {
    return this.derived.batch(this.routeStatements(tenantId, [{ versionId, items, routedPosition }]));
  }

  async routeMany(tenantId: string, routes: VersionRoute[]): Promise<string[]> {
    if (routes.length === 0) return [];
    // One transaction for all (the usual case); a version dropped meanwhile fails it whole, and
    // then each goes on its own so that only the dropped one is refused.
    if (await this.derived.batch(this.routeStatements(tenantId, routes))) return [];
    const gone: string[] = [];
    for (const r of routes) if (!(await this.route(tenantId, r.versionId, r.items, r.routedPosition))) gone.push(r.versionId);
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

  async laneWork(tenantId: string, versionId: string, key: string, limit: number): Promise<LaneWork | null> {
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
      lane = await this.getLane(tenantId, versionId, key);
      if (!lane) return null; // dropped meanwhile
    }
    const rows = await this.db.all<EventDbRow>(
      `SELECT ${E_COLUMNS} FROM lane_inbox i JOIN events e ON e.tenant_id = i.tenant_id AND e.position = i.position
       WHERE i.tenant_id = ? AND i.version_id = ? AND i.state_key = ? AND i.position > ? ORDER BY i.position LIMIT ?`,
      [tenantId, versionId, key, lane.appliedPosition, limit],
    );
    return { lane, events: rows.map(toStoredEvent) };
  }

  async applied(tenantId: string, versionId: string, key: string, r: AppliedChange) {
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

  async consume(tenantId: string, versionId: string, key: string, position: number) {
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

  async failed(
    tenantId: string,
    versionId: string,
    key: string,
    r: { position: number; error: string; hold?: boolean; holdAfterAttempts?: number },
  ) {
    const hold = r.hold ? 1 : 0;
    const after = r.holdAfterAttempts ?? Number.MAX_SAFE_INTEGER;
    // In SET, `attempts` is the value before this update, on both engines.
    await this.db.run(
      `UPDATE lanes SET attempts = attempts + 1,
         held_position = CASE WHEN held_position IS NULL AND (? = 1 OR attempts + 1 >= ?) THEN ? ELSE held_position END,
         held_error = CASE WHEN held_position IS NULL AND (? = 1 OR attempts + 1 >= ?) THEN ? ELSE held_error END
       WHERE tenant_id = ? AND version_id = ? AND state_key = ?`,
      [hold, after, r.position, hold, after, r.error.slice(0, 4000), tenantId, versionId, key],
    );
    return (await this.getLane(tenantId, versionId, key))?.attempts ?? 0;
  }

  async release(tenantId: string, versionId: string, key: string) {
    const changed = await this.db.run(
      'UPDATE lanes SET held_position = NULL, held_error = NULL, attempts = 0 WHERE tenant_id = ? AND version_id = ? AND state_key = ? AND held_position IS NOT NULL',
      [tenantId, versionId, key],
    );
    return changed > 0;
  }

  async skip(tenantId: string, versionId: string, key: string) {
    const lane = await this.getLane(tenantId, versionId, key);
    if (!lane || lane.heldPosition === null) return false;
    await this.db.batch([
      {
        // The held event and anything before it (spent rows: a lane's inbox holds none at or below its position).
        sql: 'DELETE FROM lane_inbox WHERE tenant_id = ? AND version_id = ? AND state_key = ? AND position <= ?',
        params: [tenantId, versionId, key, lane.heldPosition],
      },
      {
        sql: `UPDATE lanes SET held_position = NULL, held_error = NULL, attempts = 0,
                applied_position = CASE WHEN applied_position > ? THEN applied_position ELSE ? END
              WHERE tenant_id = ? AND version_id = ? AND state_key = ?`,
        params: [lane.heldPosition, lane.heldPosition, tenantId, versionId, key],
      },
    ]);
    return true;
  }

  async getLane(tenantId: string, versionId: string, key: string) {
    const [r] = await this.db.all(`SELECT ${LANE_COLUMNS} FROM lanes WHERE tenant_id = ? AND version_id = ? AND state_key = ?`, [
      tenantId,
      versionId,
      key,
    ]);
    return r ? toLane(r) : null;
  }

  async nextInboxPosition(tenantId: string, versionId: string, key: string, after: number) {
    const [r] = await this.db.all<{ p: number | null }>(
      'SELECT min(position) AS p FROM lane_inbox WHERE tenant_id = ? AND version_id = ? AND state_key = ? AND position > ?',
      [tenantId, versionId, key, after],
    );
    return nullableNumber(r?.p);
  }

  async acquireLease(tenantId: string, versionId: string, key: string, owner: string, now: number, until: number) {
    const take = () =>
      this.db.run(
        `UPDATE lanes SET lease_owner = ?, lease_until = ?
         WHERE tenant_id = ? AND version_id = ? AND state_key = ? AND (lease_until IS NULL OR lease_until < ? OR lease_owner = ?)`,
        [owner, until, tenantId, versionId, key, now, owner],
      );
    if ((await take()) > 0) return true;
    // No row yet (routing makes them; a lane woken before that gets one here), or another's lease.
    if (await this.getLane(tenantId, versionId, key)) return false;
    await this.db.run(INSERT_LIVE_LANE, [key, tenantId, versionId]);
    return (await take()) > 0;
  }

  async renewLease(tenantId: string, versionId: string, key: string, owner: string, until: number) {
    const changed = await this.db.run(
      `UPDATE lanes SET lease_until = ? WHERE tenant_id = ? AND version_id = ? AND state_key = ? AND lease_owner = ? AND lease_until IS NOT NULL`,
      [until, tenantId, versionId, key, owner],
    );
    return changed > 0;
  }

  async releaseLease(tenantId: string, versionId: string, key: string, owner: string) {
    await this.db.run('UPDATE lanes SET lease_until = NULL WHERE tenant_id = ? AND version_id = ? AND state_key = ? AND lease_owner = ?', [
      tenantId,
      versionId,
      key,
      owner,
    ]);
  }

  async listLanes(tenantId: string, versionId: string, opts: { afterKey: string; limit: number; heldOnly?: boolean }) {
    const rows = await this.db.all(
      `SELECT ${LANE_COLUMNS} FROM lanes WHERE tenant_id = ? AND version_id = ? AND state_key > ?
       ${opts.heldOnly ? 'AND held_position IS NOT NULL' : 'AND state IS NOT NULL'} ORDER BY state_key LIMIT ?`,
      [tenantId, versionId, opts.afterKey, opts.limit],
    );
    return rows.map(toLane);
  }

  async lanesWithWork(tenantId: string, versionId: string, limit: number) {
    const rows = await this.db.all<{ state_key: string }>(
      `SELECT DISTINCT i.state_key FROM lane_inbox i
       LEFT JOIN lanes l ON l.tenant_id = i.tenant_id AND l.version_id = i.version_id AND l.state_key = i.state_key
       WHERE i.tenant_id = ? AND i.version_id = ? AND l.held_position IS NULL AND i.position > COALESCE(l.applied_position, 0) LIMIT ?`,
      [tenantId, versionId, limit],
    );
    return rows.map((r) => r.state_key);
  }

  async hasUnappliedUpTo(tenantId: string, versionId: string, position: number) {
    const rows = await this.db.all(
      `SELECT 1 AS x FROM lane_inbox i
       LEFT JOIN lanes l ON l.tenant_id = i.tenant_id AND l.version_id = i.version_id AND l.state_key = i.state_key
       WHERE i.tenant_id = ? AND i.version_id = ? AND i.position <= ? AND l.held_position IS NULL
         AND i.position > COALESCE(l.applied_position, 0) LIMIT 1`,
      [tenantId, versionId, position],
    );
    return rows.length > 0;
  }

  async lag(tenantId: string, versionId: string): Promise<VersionLag> {
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

  async oldestUnapplied(tenantId: string, versionId: string): Promise<number | null> {
    const [row] = await this.db.all<{ position: number }>(
      `SELECT i.position FROM lane_inbox i WHERE i.tenant_id = ? AND i.version_id = ? AND ${UNAPPLIED('i')} ORDER BY i.position LIMIT 1`,
      [tenantId, versionId],
    );
    return row ? Number(row.position) : null;
  }

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

  async existingKeys(tenantId: string, versionId: string, keys: string[]) {
    const found = new Set<string>();
    for (let i = 0; i < keys.length; i += IN_CHUNK) {
      const chunk = keys.slice(i, i + IN_CHUNK);
      const rows = await this.db.all<{ state_key: string }>(
        `SELECT state_key FROM lanes WHERE tenant_id = ? AND version_id = ? AND state_key IN (${chunk.map(() => '?').join(', ')})`,
        [tenantId, versionId, ...chunk],
      );
      for (const r of rows) found.add(r.state_key);
    }
    return found;
  }

  async keyCount(tenantId: string, versionId: string) {
    const [r] = await this.db.all<{ n: number }>(
      "SELECT count(*) AS n FROM lanes WHERE tenant_id = ? AND version_id = ? AND state_key <> '!unresolved'",
      [tenantId, versionId],
    );
    return Number(r?.n ?? 0);
  }

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

  async purgeSpent(tenantId: string, versionId: string) {
    return this.db.run(`DELETE FROM lane_inbox WHERE tenant_id = ? AND version_id = ? AND NOT ${UNAPPLIED('lane_inbox')}`, [
      tenantId,
      versionId,
    ]);
  }

  async dropVersion(tenantId: string, versionId: string) {
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
