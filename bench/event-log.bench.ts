/**
 * Issue 24, item 1: reading the tenant's log (GET /events?afterPosition) on a large tenant.
 *
 * One tenant seeded with BENCH_EVENTS events (default 1,000,000) straight through the store's
 * group commit (EventLog.appendMany, 10,000 events a call; seeding is not timed): aggregates of 100
 * events, one aggregate in 100 of type `rare`, and one event in 100 of type `Rare` (spread
 * evenly), so each filter matches 1 %. Then the service (a child process on that store) is read
 * over HTTP from position 0 to the head, BENCH_RUNS times (default 3), each pass:
 *
 *   - all:                GET /events?afterPosition=P&limit=10000                  events/s
 *   - eventType=Rare:     GET /events?afterPosition=P&limit=1000&eventType=Rare      events/s, pages/s
 *   - aggregateType=rare: GET /events?afterPosition=P&limit=1000&aggregateType=rare events/s, pages/s
 *   - baseline (same run): the same events through the store in this process, no HTTP and no JSON
 *     (EventLog.readAll pages of 10,000, the read the lanes do): what the route costs above the SELECT.
 *
 * Figures are the median of the runs with [min–max].
 *
 *   npm run bench:event-log                                 (SQLite, 1M events)
 *   BENCH_EVENTS=50000 BENCH_RUNS=2 node dist/bench/event-log.bench.js   (small)
 *   BENCH_STORE=postgres npm run bench:event-log           (a PostgreSQL the bench starts)
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openStore } from '../src/store/store.factory';
import { Store } from '../src/store/store.port';
import { ThrowawayPostgres } from '../test/support/throwaway-postgres';
import { adminPost, BENCH_ADMIN_TOKEN, call, fmt, median, startChild, stopChild } from './bench-util';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const STORE = process.env.BENCH_STORE ?? 'sqlite';
const PER_AGGREGATE = 100;
const PER_CALL = 10_000;

async function seed(store: Store, tenantId: string): Promise<void> {
  const started = Date.now();
  let n = 0;
  for (let call = 0; n < EVENTS; call++) {
    const requests = [];
    for (let r = 0; r < PER_CALL / PER_AGGREGATE && n < EVENTS; r++) {
      const agg = n / PER_AGGREGATE;
      const aggregateType = agg % 100 === 42 ? 'rare' : 'account';
      const events = [];
      for (let k = 0; k < PER_AGGREGATE && n < EVENTS; k++, n++) {
        events.push({ eventType: n % 100 === 7 ? 'Rare' : 'MoneyDeposited', data: `{"amount":${n % 1000},"note":"seeded event ${n}"}` });
      }
      requests.push({ tenantId, aggregateId: `${aggregateType}-${agg}`, aggregateType, inferredType: aggregateType, events });
    }
    const outcomes = await store.events.appendMany(requests);
    if (outcomes.some((o) => !o.ok)) throw new Error(`seed call ${call} failed`);
  }
  console.log(`seeded ${fmt(EVENTS)} events in ${fmt((Date.now() - started) / 1000, 1)} s (not counted)`);
}

interface Pass {
  events: number;
  pages: number;
  seconds: number;
}

async function httpPass(url: string, key: string, limit: number, filter: string): Promise<Pass> {
  let after = 0;
  let events = 0;
  let pages = 0;
  const t0 = process.hrtime.bigint();
  for (;;) {
    const res = await call(`${url}/events?afterPosition=${after}&limit=${limit}${filter}`, 'GET', key);
    if (res.status !== 200) throw new Error(`GET /events: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    pages++;
    events += res.body.events.length;
    if (res.body.events.length === 0) break;
    after = res.body.nextAfterPosition;
  }
  return { events, pages, seconds: Number(process.hrtime.bigint() - t0) / 1e9 };
}

async function storePass(store: Store, tenantId: string): Promise<Pass> {
  let after = 0;
  let events = 0;
  let pages = 0;
  const t0 = process.hrtime.bigint();
  for (;;) {
    const rows = await store.events.readAll(tenantId, after, 10_000);
    pages++;
    events += rows.length;
    if (rows.length === 0) break;
    after = rows[rows.length - 1].position;
  }
  return { events, pages, seconds: Number(process.hrtime.bigint() - t0) / 1e9 };
}

const spread = (xs: number[], digits = 0) => `${fmt(median(xs), digits)} [${fmt(Math.min(...xs), digits)}–${fmt(Math.max(...xs), digits)}]`;

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-log-'));
  const pg = STORE === 'postgres' ? await ThrowawayPostgres.start() : undefined;
  const databaseUrl = pg ? await pg.createDatabase('bench_log') : undefined;
  const env = {
    DATA_DIR: dataDir,
    ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    LOG_LEVEL: 'error',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  };
  let svc = await startChild('src/main.js', env);
  let reader: Store | undefined;
  try {
    const created = await adminPost(svc.url, '/admin/tenants', { name: 'bench-log' });
    await stopChild(svc.child);
    const store = await openStore({ dataDir, databaseUrl });
    await seed(store, created.tenantId);
    await store.close();
    svc = await startChild('src/main.js', env);
    reader = await openStore({ dataDir, databaseUrl });

    const kinds: [string, () => Promise<Pass>][] = [
      ['baseline: store readAll, 10,000/page', () => storePass(reader!, created.tenantId)],
      ['GET /events, limit=10000', () => httpPass(svc.url, created.apiKey, 10_000, '')],
      ['GET /events?eventType=Rare (1 %), limit=1000', () => httpPass(svc.url, created.apiKey, 1000, '&eventType=Rare')],
      ['GET /events?aggregateType=rare (1 %), limit=1000', () => httpPass(svc.url, created.apiKey, 1000, '&aggregateType=rare')],
    ];
    const results = new Map<string, Pass[]>(kinds.map(([k]) => [k, []]));
    await kinds[1][1](); // warm-up: the service's first pass also fills the page cache
    for (let run = 0; run < RUNS; run++) for (const [k, pass] of kinds) results.get(k)!.push(await pass());

    console.log(`\n${STORE}, one tenant of ${fmt(EVENTS)} events, ${RUNS} runs: median [min–max]`);
    console.log('| read | events | events/s | pages/s |');
    console.log('|---|---:|---:|---:|');
    for (const [k, passes] of results) {
      const evs = passes.map((p) => p.events / p.seconds);
      const pgs = passes.map((p) => p.pages / p.seconds);
      console.log(`| ${k} | ${fmt(passes[0].events)} | ${spread(evs)} | ${spread(pgs, 1)} |`);
    }
  } finally {
    await reader?.close();
    await stopChild(svc.child);
    await pg?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
