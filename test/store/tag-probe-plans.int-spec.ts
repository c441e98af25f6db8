import { Client } from 'pg';
import { conditionHitSql } from '../../src/store/event-query-sql';
import { EventQuery } from '../../src/store/event-log.port';
import { EventWebhookRecord } from '../../src/store/event-webhook-records';
import { logQuerySql } from '../../src/store/log-query-sql';
import { conditionRaceItems } from '../../src/store/postgres/postgres-event-log-statements';
import { PostgresSqlRunner } from '../../src/store/postgres/postgres-sql-runner';
import { PostgresStore } from '../../src/store/postgres/postgres-store';
import { SqlEventWebhookRepository } from '../../src/store/sql-event-webhook-repository';
import { SqlRunner } from '../../src/store/sql-runner';
import { ThrowawayPostgres } from '../support/throwaway-postgres';
import { req, tenant } from './store-fixtures';

/**
 * The statements that probe event_tags (or events by type) once per row of an outer read — an event
 * webhook's window with a query, a read by a query of several tags, an append condition checked
 * under the head locks and its recheck inside the one-statement commit (es_condition_raced) — do
 * work in proportion to what they read, whatever PostgreSQL knows of the tables. Measured as the
 * rows the plan's nodes produced or filtered away (EXPLAIN ANALYZE, and auto_explain for the
 * function's own statement): not a time, so the bound holds on a busy machine.
 *
 * Without the probes' fence (`probeFence`, event-query-sql.ts) PostgreSQL planned them, on a tag
 * index it had no statistics for yet, as a nested loop reading every row of the tag for each outer
 * row: ~2,000,000 rows for one 1,000-event window below, 40,000 for the two-tag read, and the
 * types-only recheck hashed every event since the read position (20,000).
 */
jest.setTimeout(180_000);

const EVENTS = 20_000;
const WINDOW = 1_000;
let pg: ThrowawayPostgres;
let store: PostgresStore;
let runner: PostgresSqlRunner;
let t1: string;
let databaseUrl: string;

beforeAll(async () => {
  pg = await ThrowawayPostgres.start();
  databaseUrl = await pg.createDatabase();
  store = new PostgresStore({ connectionString: databaseUrl });
  await store.migrate();
  // The worst case on purpose: no statistics on the tables, as on a new deployment or a fresh tag.
  await store.pool.query('ALTER TABLE event_tags SET (autovacuum_enabled = false); ALTER TABLE events SET (autovacuum_enabled = false)');
  t1 = await tenant(store, 't1');
  // Every 10th event tagged `common`, every 1,000th also `rare` and of type Rare: 2,000 and 20.
  for (let from = 0; from < EVENTS; from += 1_000) {
    const events = Array.from({ length: 1_000 }, (_, k) => {
      const i = from + k;
      if (i % 1_000 === 999) return { eventType: 'Rare', data: '{}', tags: ['rare', 'common'] };
      return { eventType: 'Moved', data: '{}', ...(i % 10 === 0 ? { tags: ['common'] } : {}) };
    });
    const [o] = await store.events.appendMany([req(t1, `batch-${from}`, { events })]);
    if (!o.ok) throw new Error(o.error.message);
  }
  runner = new PostgresSqlRunner(store.pool);
}, 180_000);
afterAll(async () => {
  await store?.close();
  await pg?.stop();
});

/** Rows a plan's nodes produced (all loops) or filtered away: the work the statement did. */
function planWork(plan: any): number {
  let rows = 0;
  const walk = (node: any) => {
    rows +=
      (node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1) +
      (node['Rows Removed by Filter'] ?? 0) +
      (node['Rows Removed by Join Filter'] ?? 0) +
      (node['Rows Removed by Index Recheck'] ?? 0);
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(plan);
  return rows;
}

async function workOf(sql: string, params: unknown[]): Promise<number> {
  let i = 0;
  const text = sql.includes('?') ? sql.replace(/\?/g, () => `$${++i}`) : sql;
  const { rows } = await store.pool.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, params);
  return planWork(rows[0]['QUERY PLAN'][0].Plan);
}

/** Records the statements a repository runs, passing them on. */
class RecordingRunner implements SqlRunner {
  readonly seen: { sql: string; params: unknown[] }[] = [];
  constructor(private readonly inner: SqlRunner) {}
  get dialect() {
    return this.inner.dialect;
  }
  all<T>(sql: string, params: unknown[]) {
    this.seen.push({ sql, params });
    return this.inner.all<T>(sql, params);
  }
  run(sql: string, params: unknown[]) {
    return this.inner.run(sql, params);
  }
  batch(statements: Parameters<SqlRunner['batch']>[0]) {
    return this.inner.batch(statements);
  }
}

const webhook = (query: EventQuery): EventWebhookRecord =>
  ({ tenantId: t1, webhookId: 'w', aggregateTypes: null, eventTypes: null, query, deliveredPosition: 0 }) as EventWebhookRecord;

/** The statement a read by query runs (log-query-sql.ts), and its parameters. */
function logRead(query: EventQuery, limit = 100): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const sql = logQuerySql(
    t1,
    { direction: 'forward', afterPosition: 0, limit, query },
    (v) => (params.push(v), `$${params.length}`),
    'postgres',
  );
  return { sql, params };
}

/** es_condition_raced's work: its own statement's plan, caught by auto_explain on a connection of this test. */
async function recheckWork(query: EventQuery, after: number): Promise<{ raced: boolean; work: number }> {
  const c = new Client({ connectionString: databaseUrl });
  await c.connect();
  const plans: any[] = [];
  c.on('notice', (n) => {
    const at = n.message?.indexOf('{') ?? -1;
    if (n.message?.includes('Query Text') && at >= 0) plans.push(JSON.parse(n.message.slice(at)));
  });
  try {
    await c.query(
      "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; SET auto_explain.log_analyze = on; " +
        "SET auto_explain.log_nested_statements = on; SET auto_explain.log_format = 'json'; SET auto_explain.log_level = 'notice'; " +
        "SET client_min_messages = 'notice'",
    );
    const head = await store.events.headPosition(t1);
    const { rows } = await c.query<{ r: boolean }>('SELECT es_condition_raced($1::json, $2::json) AS r', [
      conditionRaceItems([{ index: 0, tenantId: t1, query, after }]),
      JSON.stringify({ [t1]: head }),
    ]);
    // The function's statement (nested), not the caller's SELECT around it.
    const inner = plans.filter((p) => String(p['Query Text']).includes('json_to_recordset'));
    expect(inner).toHaveLength(1);
    return { raced: rows[0].r, work: planWork(inner[0].Plan) };
  } finally {
    await c.end();
  }
}

const noStatistics = async (): Promise<void> => undefined;
const analyzed = async (): Promise<void> => void (await store.pool.query('ANALYZE events; ANALYZE event_tags'));

describe.each<[string, () => Promise<void>]>([
  ['no statistics yet', noStatistics],
  ['statistics', analyzed],
])('probes per row on PostgreSQL with %s', (_, prepare) => {
  beforeAll(() => prepare());

  it('an event webhook window with a tag query reads the window and one key per event, not the tag per event', async () => {
    const recording = new RecordingRunner(runner);
    const page = await new SqlEventWebhookRepository(recording).eventsAfter(webhook({ items: [{ tags: ['common'] }] }), 0, 1_000, WINDOW);
    // Positions 1, 11, …, 991 (every 10th event) and 1,000 (the rare one, tagged `common` too).
    expect(page.events.map((e) => e.position)).toEqual([...Array.from({ length: 100 }, (_, k) => k * 10 + 1), 1_000]);
    const filtered = recording.seen.find((s) => s.sql.includes('event_tags'))!;
    expect(await workOf(filtered.sql, filtered.params)).toBeLessThan(5 * WINDOW);
  });

  it('a read by a query of two tags probes the second on the first one’s rows', async () => {
    const { sql, params } = logRead({ items: [{ tags: ['rare', 'common'] }] });
    const { rows } = await store.pool.query(sql, params);
    expect(rows).toHaveLength(EVENTS / 1_000);
    expect(await workOf(sql, params)).toBeLessThan(1_000);
  });

  it('an append condition of two tags, checked under the head locks, stops at its first match', async () => {
    const params: unknown[] = [];
    const sql = conditionHitSql(
      [{ index: 0, tenantId: t1, query: { items: [{ tags: ['rare', 'common'] }] }, after: 0 }],
      (v) => (params.push(v), `$${params.length}`),
      'postgres',
    );
    const { rows } = await store.pool.query(sql, params);
    expect(Number(rows[0].p)).toBe(1_000);
    expect(await workOf(sql, params)).toBeLessThan(1_000);
  });

  it('the recheck inside the one-statement commit reads a types-only item by its index, not every event since the read', async () => {
    const cases: [EventQuery, boolean][] = [
      [{ items: [{ types: ['Rare'] }] }, true],
      [{ items: [{ types: ['Never'] }] }, false],
      [{ items: [{ tags: ['rare', 'common'] }] }, true],
      [{ items: [{ tags: ['rare', 'never'] }] }, false],
      [{ items: [{ tags: ['rare'], types: ['Moved'] }] }, false],
    ];
    for (const [query, raced] of cases) {
      const r = await recheckWork(query, 0);
      expect(r.raced).toBe(raced);
      expect(r.work).toBeLessThan(1_000);
    }
  });
});
