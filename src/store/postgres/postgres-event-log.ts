import { Pool, PoolClient } from 'pg';
import { idempotencyKeyOf, MonotonicClock, planAppends, RememberedKey, streamKey, tenantsOf } from '../append-plan';
import { AppendOutcome, AppendRequest, EventLog, LogQuery, StoredEvent, StreamInfo } from '../event-log.port';
import { EVENT_COLUMNS, EventDbRow, StreamDbRow, tagsColumn, toStoredEvent, toStreamInfo } from '../event-row';
import { RememberedKeyRow, rememberedKeys } from '../idempotency-rows';
import { logQuerySql } from '../log-query-sql';
import { InflightWrites } from './inflight-writes';
import { conditionsOf } from '../event-query-sql';
import { lockedConditionHits, mayMeetOwnBatch } from './commit-conditions';
import {
  READ_STREAMS,
  appendStatement,
  REMEMBERED_KEYS,
  DELETE_EXPIRED_KEYS,
  LOCK_HEADS,
  conditionRaceItems,
} from './postgres-event-log-statements';
import { StreamVersionCache } from './stream-version-cache';
import { withTransaction } from './with-transaction';
import { AggregateErasure, ERASURES_AGGREGATE_ID, ErasureResult } from '../erasure.port';
import { driveAsync, erasureSteps } from '../erasure-steps';
import { toPgPlaceholders } from '../sql-runner';

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
      // A condition that an earlier request of the same batch may meet needs real positions to be decided: locked first.
      if (!mayMeetOwnBatch(requests)) {
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
      }
      // Another instance wrote these aggregates meanwhile (or erased one: the locked read sees it), or stored an event a
      // condition meets. Retrying optimistically could starve under contention, so lock first and read under the lock:
      // this attempt cannot be stale, and a condition's refusal names the real position of the event it met.
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

  /**
   * The append under the tenants' head locks, taken first: every statement after it (READ COMMITTED:
   * each takes a new snapshot) sees every commit of these tenants before it, and none can commit an
   * event meanwhile, since every event is stored under its tenant's head lock (the one-statement
   * commit locks `h` before inserting, an erasure locks it first). So the versions, keys and — for
   * conditions (DCB) — the first matching positions read here stay true until this commit: a
   * condition is decided on the whole log up to the head, with no event of another instance able
   * to slip in between the read and the write. The one-statement commit decides conditions as well
   * (es_condition_raced, postgres-event-log-statements.ts), but only whether one met an event, not
   * which: its plan was made on offsets. So a batch whose condition met one comes here, and is
   * refused here with the real position; so does a batch whose condition an earlier request of the
   * same batch may meet (mayMeetOwnBatch). Heads are the real ones here.
   */
  private appendLocked(requests: AppendRequest[], keys: Set<string>): Promise<AppendOutcome[]> {
    return withTransaction(this.pool, async (c) => {
      const locked = await c.query<{ tenant_id: string; position: number }>({
        name: 'es_lock_heads',
        text: LOCK_HEADS,
        values: [tenantsOf(requests)],
      });
      const heads = new Map(locked.rows.map((r) => [r.tenant_id, Number(r.position)]));
      const current = await this.currentStreams(c, keys, false);
      // Under the lock every writer of these tenants' keys has committed or waits: what is read is final.
      const remembered = await this.rememberedKeys(c, requests, true);
      const hits = await lockedConditionHits(c, requests);
      const out = await this.runAppend(c, requests, keys, current, remembered, heads, hits);
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
    locked?: Map<string, number>,
    hits?: Map<number, number>,
  ): Promise<AppendOutcome[] | null> {
    const tenants = tenantsOf(requests);
    // Plan against counters of 0 (optimistic: the counters are not read): positions come out as 1-based
    // offsets, the statement adds the locked counter. Under the lock, against the real counters read
    // there (a condition names real positions): the statement is sent offsets all the same.
    const planned = new Map(tenants.map((t) => [t, locked?.get(t) ?? 0]));
    const plan = planAppends(requests, current, planned, this.clock.now(), remembered, hits);
    const offset = (tenantId: string, position: number) => position - planned.get(tenantId)!;

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
          o: offset(r.tenantId, r.position),
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
          g: tagsColumn(r.tags),
        })),
      ),
      tenants.map((t) => (plan.heads.has(t) ? offset(t, plan.heads.get(t)!) : 0)),
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
          f: offset(k.tenantId, k.firstPosition),
          l: offset(k.tenantId, k.lastPosition),
          out: k.outcome,
          ts: k.createdAt,
        })),
      ),
    ];
    const tagRows = rows.flatMap((r) => (r.tags ?? []).map((g) => ({ t: r.tenantId, o: offset(r.tenantId, r.position), g })));
    if (tagRows.length > 0) values.push(JSON.stringify(tagRows));
    // Planned on offsets, no condition was met here (no store hits were given, and the batch cannot meet its own, see
    // appendMany): the statement decides the accepted requests' conditions again once it holds the heads.
    const unlockedConditions = locked ? [] : conditionsOf(requests, plan.outcomes);
    if (unlockedConditions.length > 0) values.push(conditionRaceItems(unlockedConditions));
    const statement = appendStatement({ tags: tagRows.length > 0, conditions: unlockedConditions.length > 0 });
    const result = await db.query({ ...statement, values });
    const out = result.rows[0] as { stale: number; raced: boolean; tenants: string[]; bases: number[] };
    if (Number(out.stale) > 0 || out.raced) return null;

    const base = new Map(out.tenants.map((t, i) => [t, Number(out.bases[i])]));
    for (const r of rows) r.position += base.get(r.tenantId)! - planned.get(r.tenantId)!;
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
    // A DCB query's text varies with its shape (items, tags, types): unnamed, parsed each time.
    const { rows } = query.query
      ? await this.pool.query<EventDbRow>(text, values)
      : await this.pool.query<EventDbRow>({ name: `es_log_${shapeId(text)}`, text, values });
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
