import { Pool, PoolClient } from 'pg';
import { idempotencyKeyOf, MonotonicClock, planAppends, RememberedKey, streamKey, tenantsOf } from '../append-plan';
import { AppendOutcome, AppendRequest, EventLog, LogQuery, StoredEvent, StreamInfo } from '../event-log.port';
import { EVENT_COLUMNS, EventDbRow, StreamDbRow, toStoredEvent, toStreamInfo } from '../event-row';
import { REMEMBERED_KEY_COLUMNS, RememberedKeyRow, rememberedKeys } from '../idempotency-rows';
import { logQuerySql } from '../log-query-sql';
import { InflightWrites } from './inflight-writes';
import { StreamVersionCache } from './stream-version-cache';
import { withTransaction } from './with-transaction';
import { AggregateErasure, ERASURES_AGGREGATE_ID, ErasureResult } from '../erasure.port';
import { driveAsync, erasureSteps } from '../erasure-steps';
import { toPgPlaceholders } from '../sql-runner';

// Named statements: parsed once per connection, then only bound and executed.
const READ_STREAMS = {
  name: 'es_streams',
  text: `SELECT s.tenant_id, s.aggregate_id, s.aggregate_type, s.version, s.erased_at
         FROM streams s JOIN unnest($1::text[], $2::text[]) AS k(t, a) ON s.tenant_id = k.t AND s.aggregate_id = k.a`,
};

/**
 * A whole group commit in one statement, so one round trip (autocommit) per batch:
 *  - chk: every stream the plan touched is still at the version (and type) the plan assumed;
 *  - h: lock the tenants' counter rows, in tenant order (writers never deadlock), only if chk passed;
 *  - insert events at counter + offset, upsert streams, advance counters;
 *  - remember the idempotency keys of accepted requests (plain INSERT: a key the store already has —
 *    the optimistic plan does not read them, or another instance took it since — fails the statement
 *    with a unique violation, and the locked retry below reads that key and replays it).
 * The statement's snapshot predates the lock wait, so a writer on another instance that committed
 * in between is caught by the (tenant, aggregate, version) unique key instead: the caller retries.
 */
const APPEND = {
  name: 'es_append',
  // Rows travel as one JSON document per set: JSON.stringify is native, while pg's array
  // parameters are escaped element by element in JavaScript (it showed in profiles).
  text: `
  WITH chk AS (
    SELECT count(*) AS stale
    FROM json_to_recordset($1::json) AS c(t text, a text, v bigint, y text)
    LEFT JOIN streams s ON s.tenant_id = c.t AND s.aggregate_id = c.a
    WHERE coalesce(s.version, 0) <> c.v OR (c.v > 0 AND s.aggregate_type <> c.y)
  ), h AS (
    SELECT tenant_id, position FROM tenant_heads
    WHERE tenant_id = ANY($2::text[]) AND (SELECT stale FROM chk) = 0
    ORDER BY tenant_id FOR UPDATE
  ), ins AS (
    INSERT INTO events (tenant_id, position, aggregate_id, version, event_id, aggregate_type, event_type,
                        data, metadata, correlation_id, causation_id, created_at, trace_parent, trace_state)
    SELECT x.t, h.position + x.o, x.a, x.v, x.i, x.y, x.e, x.d, x.m, x.c, x.k, to_timestamp(x.ts / 1000.0), x.tp, x.tt
    FROM json_to_recordset($3::json) AS x(t text, o bigint, a text, v bigint, i uuid, y text, e text, d text, m text, c text, k text, ts bigint,
                                          tp text, tt text)
    JOIN h ON h.tenant_id = x.t
    RETURNING 1
  ), st AS (
    INSERT INTO streams (tenant_id, aggregate_id, aggregate_type, version)
    SELECT z.t, z.a, z.y, z.v FROM json_to_recordset($5::json) AS z(t text, a text, y text, v bigint)
    WHERE EXISTS (SELECT 1 FROM h)
    ON CONFLICT (tenant_id, aggregate_id) DO UPDATE SET version = EXCLUDED.version
    RETURNING 1
  ), sn AS (
    INSERT INTO snapshots (tenant_id, aggregate_id, aggregate_type, binding_id, version, state, failed_version, error, updated_at)
    SELECT q.t, q.a, q.y, q.b, q.v, q.s, q.fv, q.er, to_timestamp(q.ts / 1000.0)
    FROM json_to_recordset($6::json) AS q(t text, a text, y text, b text, v bigint, s text, fv bigint, er text, ts bigint)
    WHERE EXISTS (SELECT 1 FROM h)
    ON CONFLICT (tenant_id, aggregate_id) DO UPDATE SET binding_id = EXCLUDED.binding_id, version = EXCLUDED.version,
      state = EXCLUDED.state, failed_version = EXCLUDED.failed_version, error = EXCLUDED.error, updated_at = EXCLUDED.updated_at
    RETURNING 1
  ), ik AS (
    INSERT INTO idempotency_keys (tenant_id, idem_key, request_hash, first_position, last_position, outcome, created_at)
    SELECT x.t, x.key, x.h, h.position + x.f, h.position + x.l, x.out, x.ts
    FROM json_to_recordset($7::json) AS x(t text, key text, h text, f bigint, l bigint, out text, ts bigint)
    JOIN h ON h.tenant_id = x.t
    RETURNING 1
  ), hu AS (
    UPDATE tenant_heads th SET position = h.position + n.n
    FROM h JOIN unnest($2::text[], $4::bigint[]) AS n(t, n) ON n.t = h.tenant_id
    WHERE th.tenant_id = h.tenant_id AND n.n > 0
    RETURNING 1
  )
  SELECT (SELECT stale FROM chk) AS stale,
         coalesce((SELECT array_agg(tenant_id) FROM h), '{}') AS tenants,
         coalesce((SELECT array_agg(position) FROM h), '{}') AS bases,
         (SELECT count(*) FROM ins) AS inserted`,
};

/** The keys a batch carries that the store remembers (not expired), each with the events it names. */
const REMEMBERED_KEYS = {
  // Not a named (prepared) statement: its generic plan, made while idempotency_keys was nearly empty,
  // stayed a scan of the table for the life of the connection, and keyed appends slowed as the table
  // grew (bench:idempotency on PostgreSQL: 2.7k → 1.0k appends/s within 50 s). Planned each time with
  // its parameters, each key is a primary-key probe and its events a range of the events' key.
  text: `SELECT ${REMEMBERED_KEY_COLUMNS}
         FROM unnest($1::text[], $2::text[], $3::bigint[]) AS q(t, key, nb)
         CROSS JOIN LATERAL (SELECT * FROM idempotency_keys i WHERE i.tenant_id = q.t AND i.idem_key = q.key AND i.created_at >= q.nb) k
         CROSS JOIN LATERAL (SELECT * FROM events v WHERE v.tenant_id = k.tenant_id AND v.position BETWEEN k.first_position AND k.last_position) e
         ORDER BY k.tenant_id, k.idem_key, e.position`,
};

/** Under the tenants' lock: expired rows of the batch's keys go, so the keys can be taken again. */
const DELETE_EXPIRED_KEYS = {
  // Unnamed for the same reason as REMEMBERED_KEYS.
  text: `DELETE FROM idempotency_keys k USING unnest($1::text[], $2::text[], $3::bigint[]) AS q(t, key, nb)
         WHERE k.tenant_id = q.t AND k.idem_key = q.key AND k.created_at < q.nb`,
};

const LOCK_HEADS = 'SELECT 1 FROM tenant_heads WHERE tenant_id = ANY($1::text[]) ORDER BY tenant_id FOR UPDATE';
const UNIQUE_VIOLATION = '23505';
/** streams_erased_frozen (erasure-schema.ts): an append planned before an erasure committed. */
const CHECK_VIOLATION = '23514';
const DEADLOCK = '40P01';
/** The erased state's text removed by retention between the erasure finding it and referring to it. */
const FOREIGN_KEY_VIOLATION = '23503';
const ERASE_ATTEMPTS = 3;

type Queryable = Pick<Pool, 'query'> | PoolClient;

export class PostgresEventLog implements EventLog, AggregateErasure {
  private readonly clock = new MonotonicClock();
  private readonly cache = new StreamVersionCache();

  constructor(
    private readonly pool: Pool,
    private readonly inflight: InflightWrites,
    private readonly beforeCommit?: (tenantIds: string[]) => Promise<void>,
  ) {}

  appendMany(requests: AppendRequest[]): Promise<AppendOutcome[]> {
    return this.inflight.run(async () => {
      const keys = new Set(requests.map((r) => streamKey(r.tenantId, r.aggregateId)));
      try {
        const fast = await this.appendOptimistic(requests, keys);
        if (fast) return fast;
      } catch (e) {
        const code = (e as { code?: string }).code;
        if (code !== UNIQUE_VIOLATION && code !== CHECK_VIOLATION) {
          this.cache.forget(keys);
          throw e;
        }
      }
      // Another instance wrote these aggregates meanwhile (or erased one: the locked read sees it). Retrying optimistically could starve
      // under contention, so lock first and read under the lock: this attempt cannot be stale.
      this.cache.forget(keys);
      try {
        return await this.appendLocked(requests, keys);
      } catch (e) {
        this.cache.forget(keys);
        throw e;
      }
    });
  }

  /** One round trip, planned on cached versions. null when they were stale (nothing written). */
  private async appendOptimistic(requests: AppendRequest[], keys: Set<string>): Promise<AppendOutcome[] | null> {
    const current = await this.currentStreams(this.pool, keys);
    // The batch's keys are not looked up first (a round trip less per keyed commit): a key the store
    // already has fails the commit statement with a unique violation, and the locked retry reads it
    // and replays. Only when the plan would refuse a keyed request are they read first, so that a
    // retry whose expectedVersion its first attempt made stale answers that attempt, not 409.
    const remembered = refusesKeyed(requests, current) ? await this.rememberedKeys(this.pool, requests) : undefined;
    if (!this.beforeCommit) return this.runAppend(this.pool, requests, keys, current, remembered);
    return withTransaction(this.pool, async (c) => {
      const out = await this.runAppend(c, requests, keys, current, remembered);
      await this.beforeCommit!(tenantsOf(requests));
      return out;
    });
  }

  private appendLocked(requests: AppendRequest[], keys: Set<string>): Promise<AppendOutcome[]> {
    return withTransaction(this.pool, async (c) => {
      await c.query({ name: 'es_lock_heads', text: LOCK_HEADS, values: [tenantsOf(requests)] });
      const current = await this.currentStreams(c, keys, false);
      // Under the lock every writer of these tenants' keys has committed or waits: what is read is final.
      const remembered = await this.rememberedKeys(c, requests, true);
      const out = await this.runAppend(c, requests, keys, current, remembered);
      if (!out) throw new Error('stream versions changed under the tenant lock'); // cannot happen: the lock orders writers
      if (this.beforeCommit) await this.beforeCommit(tenantsOf(requests));
      return out;
    });
  }

  private async runAppend(
    db: Queryable,
    requests: AppendRequest[],
    keys: Set<string>,
    current: Map<string, StreamInfo>,
    remembered: Map<string, RememberedKey> | undefined,
  ): Promise<AppendOutcome[] | null> {
    const tenants = tenantsOf(requests);
    // Plan against counters of 0: positions come out as 1-based offsets, the statement adds the locked counter.
    const plan = planAppends(requests, current, new Map(tenants.map((t) => [t, 0])), this.clock.now(), remembered);

    const checks = [...keys].map((k) => {
      const [t, a] = k.split('\u0000');
      const info = current.get(k);
      return { t, a, v: info?.version ?? 0, y: info?.aggregateType ?? '' };
    });
    const rows = plan.rows;
    const s = plan.streams;
    const values = [
      JSON.stringify(checks),
      tenants,
      JSON.stringify(
        rows.map((r) => ({
          t: r.tenantId,
          o: r.position,
          a: r.aggregateId,
          v: r.version,
          i: r.eventId,
          y: r.aggregateType,
          e: r.eventType,
          d: r.data,
          m: r.metadata,
          c: r.correlationId,
          k: r.causationId,
          ts: r.timestamp,
          tp: r.traceParent ?? null,
          tt: r.traceState ?? null,
        })),
      ),
      tenants.map((t) => plan.heads.get(t) ?? 0),
      JSON.stringify(s.map((x) => ({ t: x.tenantId, a: x.aggregateId, y: x.aggregateType, v: x.version }))),
      JSON.stringify(
        plan.snapshots.map((n) => ({
          t: n.tenantId,
          a: n.aggregateId,
          y: n.aggregateType,
          b: n.bindingId,
          v: n.version,
          s: n.state,
          fv: n.failedVersion,
          er: n.error,
          ts: n.updatedAt,
        })),
      ),
      JSON.stringify(
        plan.keys.map((k) => ({
          t: k.tenantId,
          key: k.key,
          h: k.requestHash,
          f: k.firstPosition,
          l: k.lastPosition,
          out: k.outcome,
          ts: k.createdAt,
        })),
      ),
    ];
    const result = await db.query({ ...APPEND, values });
    const out = result.rows[0] as { stale: number; tenants: string[]; bases: number[] };
    if (Number(out.stale) > 0) return null;

    const base = new Map(out.tenants.map((t, i) => [t, Number(out.bases[i])]));
    for (const r of rows) r.position += base.get(r.tenantId)!;
    for (const w of s) this.cache.set(streamKey(w.tenantId, w.aggregateId), { aggregateType: w.aggregateType, version: w.version });
    return plan.outcomes;
  }

  /**
   * The batch's idempotency keys the store remembers: one indexed statement, none without a key.
   * `purge` (under the tenants' lock) first removes expired rows of those keys.
   */
  private async rememberedKeys(db: Queryable, requests: AppendRequest[], purge = false): Promise<Map<string, RememberedKey> | undefined> {
    const t: string[] = [];
    const k: string[] = [];
    const nb: number[] = [];
    const seen = new Set<string>();
    for (const r of requests) {
      if (!r.idempotency) continue;
      const id = idempotencyKeyOf(r.tenantId, r.idempotency.key);
      if (seen.has(id)) continue; // the same key twice in one group commit: once in the look-up
      seen.add(id);
      t.push(r.tenantId);
      k.push(r.idempotency.key);
      nb.push(r.idempotency.notBefore);
    }
    if (t.length === 0) return undefined;
    if (purge) await db.query({ ...DELETE_EXPIRED_KEYS, values: [t, k, nb] });
    const { rows } = await db.query<RememberedKeyRow>({ ...REMEMBERED_KEYS, values: [t, k, nb] });
    return rows.length > 0 ? rememberedKeys(rows) : undefined;
  }

  /** Versions from the cache (unless told not to); the misses in one query. */
  private async currentStreams(db: Queryable, keys: Set<string>, useCache = true): Promise<Map<string, StreamInfo>> {
    const current = new Map<string, StreamInfo>();
    const missT: string[] = [];
    const missA: string[] = [];
    for (const k of keys) {
      const hit = useCache ? this.cache.get(k) : undefined;
      if (hit) current.set(k, hit);
      else {
        // The key is the pair itself (no search of the requests: that was quadratic in new aggregates).
        const [t, a] = k.split('\u0000');
        missT.push(t);
        missA.push(a);
      }
    }
    if (missT.length > 0) {
      const { rows } = await db.query<StreamDbRow & { tenant_id: string; aggregate_id: string }>({
        ...READ_STREAMS,
        values: [missT, missA],
      });
      for (const r of rows) current.set(streamKey(r.tenant_id, r.aggregate_id), toStreamInfo(r));
    }
    return current;
  }

  /**
   * The erasure's steps (erasure-steps.ts) in one transaction. A deadlock (retention deleting the
   * same notifications while waiting for a counter row this holds), or retention removing the '{}'
   * state text between this finding and referring to it, is retried: nothing was kept.
   */
  erase(tenantId: string, aggregateId: string): Promise<ErasureResult> {
    return this.inflight.run(async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          const out = await withTransaction(this.pool, (c) =>
            driveAsync(erasureSteps('postgres', tenantId, aggregateId, this.clock.now()), async (s) => {
              const r = await c.query(toPgPlaceholders(s.sql), s.params);
              return s.kind === 'all' ? r.rows : (r.rowCount ?? 0);
            }),
          );
          this.cache.forget([streamKey(tenantId, aggregateId), streamKey(tenantId, ERASURES_AGGREGATE_ID)]);
          return out;
        } catch (e) {
          const code = (e as { code?: string }).code;
          if ((code !== DEADLOCK && code !== FOREIGN_KEY_VIOLATION) || attempt >= ERASE_ATTEMPTS) throw e;
        }
      }
    });
  }

  async readStream(tenantId: string, aggregateId: string, fromVersion: number, limit: number): Promise<StoredEvent[]> {
    const { rows } = await this.pool.query<EventDbRow>({
      name: 'es_read_stream',
      text: `SELECT ${EVENT_COLUMNS} FROM events WHERE tenant_id = $1 AND aggregate_id = $2 AND version >= $3 ORDER BY version LIMIT $4`,
      values: [tenantId, aggregateId, fromVersion, limit],
    });
    return rows.map(toStoredEvent);
  }

  async readStreamBackward(tenantId: string, aggregateId: string, atOrBeforeVersion: number, limit: number): Promise<StoredEvent[]> {
    const { rows } = await this.pool.query<EventDbRow>({
      name: 'es_read_stream_backward',
      text: `SELECT ${EVENT_COLUMNS} FROM events WHERE tenant_id = $1 AND aggregate_id = $2 AND version <= $3 ORDER BY version DESC LIMIT $4`,
      values: [tenantId, aggregateId, atOrBeforeVersion, limit],
    });
    return rows.map(toStoredEvent);
  }

  /**
   * One statement, so one snapshot: the tenant's appends commit in position order (each holds the
   * tenant's head row until its commit), so a snapshot that sees position N+1 sees N too.
   */
  async readLog(tenantId: string, query: LogQuery): Promise<StoredEvent[]> {
    const values: unknown[] = [];
    const text = logQuerySql(tenantId, query, (v) => (values.push(v), `$${values.length}`), 'postgres');
    // Named by its text: each shape is parsed once per connection (a handful of shapes in practice).
    const { rows } = await this.pool.query<EventDbRow>({ name: `es_log_${shapeId(text)}`, text, values });
    return rows.map(toStoredEvent);
  }

  async readAll(tenantId: string, afterPosition: number, limit: number): Promise<StoredEvent[]> {
    const { rows } = await this.pool.query<EventDbRow>({
      name: 'es_read_all',
      text: `SELECT ${EVENT_COLUMNS} FROM events WHERE tenant_id = $1 AND position > $2 ORDER BY position LIMIT $3`,
      values: [tenantId, afterPosition, limit],
    });
    return rows.map(toStoredEvent);
  }

  async streamInfo(tenantId: string, aggregateId: string): Promise<StreamInfo | null> {
    const { rows } = await this.pool.query<StreamDbRow>({
      name: 'es_stream_info',
      text: 'SELECT aggregate_type, version, erased_at FROM streams WHERE tenant_id = $1 AND aggregate_id = $2',
      values: [tenantId, aggregateId],
    });
    return rows[0] ? toStreamInfo(rows[0]) : null;
  }

  async headPosition(tenantId: string): Promise<number> {
    const { rows } = await this.pool.query<{ position: number }>({
      name: 'es_head',
      text: 'SELECT position FROM tenant_heads WHERE tenant_id = $1',
      values: [tenantId],
    });
    return rows[0] ? Number(rows[0].position) : 0;
  }
}

const shapeIds = new Map<string, number>();
/** A small number per distinct SQL text (pg's statement names are per connection and must not clash). */
function shapeId(text: string): number {
  let id = shapeIds.get(text);
  if (id === undefined) shapeIds.set(text, (id = shapeIds.size));
  return id;
}

/** Whether a plan without the store's keys refuses one of the batch's keyed requests (none keyed: false, no planning). */
function refusesKeyed(requests: AppendRequest[], current: Map<string, StreamInfo>): boolean {
  if (!requests.some((r) => r.idempotency)) return false;
  const zero = new Map(tenantsOf(requests).map((t) => [t, 0]));
  const { outcomes } = planAppends(requests, current, zero, Date.now());
  return outcomes.some((o, i) => !o.ok && requests[i].idempotency !== undefined);
}
