import { groupBy } from '../common/group-by';
import { EVENT_COLUMNS, EventDbRow, toStoredEvent } from './event-row';
import {
  AppliedChange,
  DeployRequest,
  DroppedVersion,
  InboxItem,
  LaneRecord,
  LaneWork,
  ProjectionRecord,
  ProjectionRepository,
  ProjectionVersion,
  SweepCandidate,
  VersionLag,
  VersionRoute,
} from './projection-repository.port';
import { forgetUnreferencedStates, logStateChanges } from './sql-notification-repository';
import { SqlRunner, SqlStatement } from './sql-runner';

const E_COLUMNS = EVENT_COLUMNS.split(',')
  .map((c) => `e.${c.trim()}`)
  .join(', ');
const LANE_COLUMNS = 'state_key, state, applied_position, updated_at, held_position, held_error, attempts';
const INBOX_CHUNK = 500;

const n = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

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

function toVersion(r: any): ProjectionVersion {
  return {
    tenantId: r.tenant_id,
    versionId: r.version_id,
    projectionId: r.projection_id,
    className: r.class_name,
    targetPosition: Number(r.target_position),
    routedPosition: Number(r.routed_position),
    caughtUpAt: n(r.caught_up_at),
    createdAt: Number(r.created_at),
  };
}

function toLane(r: any): LaneRecord {
  return {
    key: r.state_key,
    state: r.state,
    appliedPosition: Number(r.applied_position),
    updatedAt: n(r.updated_at),
    heldPosition: n(r.held_position),
    heldError: r.held_error,
    attempts: Number(r.attempts),
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

/** A lane row for a version that still exists (a lane of a dropped version is never made again). */
const INSERT_LIVE_LANE = `INSERT INTO lanes (tenant_id, version_id, state_key)
  SELECT tenant_id, version_id, CAST(? AS TEXT) FROM projection_versions WHERE tenant_id = ? AND version_id = ? ON CONFLICT DO NOTHING`;
const VERSION_EXISTS =
  'EXISTS (SELECT 1 FROM projection_versions v WHERE v.tenant_id = lanes.tenant_id AND v.version_id = lanes.version_id)';

/** One implementation for both stores: the SQL is the same; the runner differs (see sql-runner.ts). */
export class SqlProjectionRepository implements ProjectionRepository {
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
    for (let i = 0; i < versionIds.length; i += INBOX_CHUNK) {
      const chunk = versionIds.slice(i, i + INBOX_CHUNK);
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

  async route(tenantId: string, versionId: string, items: InboxItem[], routedPosition: number) {
    return this.db.batch(this.routeStatements(tenantId, [{ versionId, items, routedPosition }]));
  }

  async routeMany(tenantId: string, routes: VersionRoute[]): Promise<string[]> {
    if (routes.length === 0) return [];
    // One transaction for all (the usual case); a version dropped meanwhile fails it whole, and
    // then each goes on its own so that only the dropped one is refused.
    if (await this.db.batch(this.routeStatements(tenantId, routes))) return [];
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
      for (let i = 0; i < ids.length; i += INBOX_CHUNK) {
        const chunk = ids.slice(i, i + INBOX_CHUNK);
        stmts.push({
          sql: `UPDATE projection_versions SET routed_position = CASE WHEN routed_position > ? THEN routed_position ELSE ? END
                WHERE tenant_id = ? AND version_id IN (${chunk.map(() => '?').join(', ')})`,
          params: [position, position, tenantId, ...chunk],
          mustChange: chunk.length,
        });
      }
    }
    const inbox = routes.flatMap((r) => r.items.map((it) => [tenantId, r.versionId, it.key, it.position]));
    for (let i = 0; i < inbox.length; i += INBOX_CHUNK) {
      const chunk = inbox.slice(i, i + INBOX_CHUNK);
      stmts.push({
        sql: `INSERT INTO lane_inbox (tenant_id, version_id, state_key, position) VALUES ${chunk.map(() => '(?, ?, ?, ?)').join(', ')}
              ON CONFLICT DO NOTHING`,
        params: chunk.flat(),
      });
    }
    // The lanes' rows are made here, once, rather than by every lane run (a write each).
    const lanes = routes.flatMap((r) => [...new Set(r.items.map((it) => it.key))].map((key) => [tenantId, r.versionId, key]));
    for (let i = 0; i < lanes.length; i += INBOX_CHUNK) {
      const chunk = lanes.slice(i, i + INBOX_CHUNK);
      stmts.push({
        sql: `INSERT INTO lanes (tenant_id, version_id, state_key) VALUES ${chunk.map(() => '(?, ?, ?)').join(', ')} ON CONFLICT DO NOTHING`,
        params: chunk.flat(),
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
      return await this.db.batch(statements);
    } catch (e) {
      // PostgreSQL: retention removed a state text this lane had just found (and it committed
      // first): nothing was kept; once more stores the text again.
      if (['23502', '23503'].includes((e as { code?: string }).code ?? '')) return this.db.batch(statements);
      throw e;
    }
  }

  private appliedStatements(tenantId: string, versionId: string, key: string, r: AppliedChange): SqlStatement[] {
    return [
      // First, and the guard of the whole write: the checkpoint moves from where this run read it,
      // or another run of the lane stored first and this one keeps nothing (its row lock on
      // PostgreSQL also orders the two runs' notification logs).
      {
        sql: `UPDATE lanes SET state = ?, applied_position = ?, updated_at = ?, attempts = 0
              WHERE tenant_id = ? AND version_id = ? AND state_key = ? AND applied_position = ? AND ${VERSION_EXISTS}`,
        params: [r.state, r.appliedPosition, r.updatedAt, tenantId, versionId, key, r.fromPosition],
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
    await this.db.batch([
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
        sql: 'DELETE FROM lane_inbox WHERE tenant_id = ? AND version_id = ? AND state_key = ? AND position = ?',
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
    return n(r?.p);
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

  async lag(tenantId: string, versionId: string): Promise<VersionLag> {
    const [inbox] = await this.db.all<{ depth: number; oldest: number | null }>(
      'SELECT count(*) AS depth, min(position) AS oldest FROM lane_inbox WHERE tenant_id = ? AND version_id = ?',
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
      oldestUnapplied: n(inbox.oldest),
    };
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

  async dropVersion(tenantId: string, versionId: string) {
    await this.db.batch([
      { sql: 'DELETE FROM lane_inbox WHERE tenant_id = ? AND version_id = ?', params: [tenantId, versionId] },
      { sql: 'DELETE FROM lanes WHERE tenant_id = ? AND version_id = ?', params: [tenantId, versionId] },
      { sql: 'DELETE FROM projection_versions WHERE tenant_id = ? AND version_id = ?', params: [tenantId, versionId] },
    ]);
  }

  async forgetDropped(tenantId: string, versionId: string) {
    await this.db.run('DELETE FROM dropped_versions WHERE tenant_id = ? AND version_id = ?', [tenantId, versionId]);
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
      states.map((r) => Number(r.state_id)),
    );
    return [
      ...new Set([...versions.map((v) => v.version_id), ...[p.activeVersion, p.pendingVersion].filter((v): v is string => v !== null)]),
    ];
  }

  async existingKeys(tenantId: string, versionId: string, keys: string[]) {
    const found = new Set<string>();
    for (let i = 0; i < keys.length; i += INBOX_CHUNK) {
      const chunk = keys.slice(i, i + INBOX_CHUNK);
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
}
