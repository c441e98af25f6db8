/**
 * Issue 28 (docs/dcb.md): what tags, append conditions and reads by query cost. The service runs as
 * a child process started by this script (quotas off); each figure has its baseline in the same run.
 *
 *   (a) conditional vs plain appends over HTTP, BENCH_CLIENTS (default 32) closed-loop clients, on
 *       SQLite and PostgreSQL. Plain: POST /events with a tag `client:<w>`. Conditional: the same
 *       body plus `condition: {failIfEventsMatch: {items: [{types: ['Deposited'], tags: ['client:<w>']}]},
 *       after: <the client's last acknowledged position>}` (the check the commit makes, never failing:
 *       each client's appends follow each other). BENCH_ROUNDS pairs (default 3) of BENCH_SECONDS
 *       (default 5), the order alternating per pair; appends/s, the service's CPU per append (µs) and
 *       the ratio conditional ÷ plain per pair (target ≥ 0.8).
 *   (b) false conflicts: BENCH_CLIENTS writers, each on its own tag `counter:<w>`, doing what a DCB
 *       client does — read by query (backward, limit 1: the last event of its tag), append with the
 *       condition `after` = that event's position — for BENCH_SECONDS, on each store. Every 409 is a
 *       false conflict (nobody else writes that tag): attempts, 409s, rate (target 0).
 *   (c) a read by tag over a BENCH_EVENTS-event tenant (default 1,000,000; BENCH_STORE=sqlite|postgres,
 *       default sqlite): seeded straight through the store's group commit (EventLog.appendMany,
 *       10,000 events a call, in this process, not timed), one event in 100 of type `Rare` and
 *       tagged `rare` (every event also tagged `account:<aggregate>`). Then BENCH_RUNS passes
 *       (default 3) reading every match, pages of 1,000: POST /events/query {items:[{tags:['rare']}]}
 *       against the same 1 % read by type the way issue 24 does (GET /events?eventType=Rare, the
 *       baseline) and by a query on the type; events/s.
 *
 *   npm run bench:dcb
 *   BENCH_PARTS=c BENCH_EVENTS=50000 BENCH_RUNS=2 node dist/bench/dcb.bench.js     (small)
 *   BENCH_PARTS=a,b BENCH_STORES=sqlite BENCH_SECONDS=3 BENCH_ROUNDS=1 node dist/bench/dcb.bench.js
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openStore } from '../src/store/store.factory';
import { Store } from '../src/store/store.port';
import { ThrowawayPostgres } from '../test/support/throwaway-postgres';
import { adminPost, BENCH_ADMIN_TOKEN, call, closedLoop, cpuMsOf, fmt, median, startChild, stopChild } from './bench-util';

const PARTS = (process.env.BENCH_PARTS ?? 'a,b,c').split(',');
const STORES = (process.env.BENCH_STORES ?? 'sqlite,postgres').split(',');
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 32);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const READ_STORE = process.env.BENCH_STORE ?? 'sqlite';
const AGGREGATES_PER_CLIENT = 50;
const PER_AGGREGATE = 100;
const PER_CALL = 10_000;
/** Events n (from 0) with n % 100 === 7: the 1 %. */
const RARE = Math.floor((EVENTS + 92) / 100);

const spread = (xs: number[], digits = 0) => `${fmt(median(xs), digits)} [${fmt(Math.min(...xs), digits)}–${fmt(Math.max(...xs), digits)}]`;

/** A service child on a fresh store of `kind`; `pg` is started on first use. */
async function withService<T>(
  kind: string,
  pg: () => Promise<ThrowawayPostgres>,
  fn: (s: { url: string; pid: number; env: Record<string, string> }) => Promise<T>,
): Promise<T> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-dcb-'));
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    LOG_LEVEL: 'error',
    ...(kind === 'postgres' ? { DATABASE_URL: await (await pg()).createDatabase(`bench_dcb_${Date.now()}`) } : {}),
  };
  const { url, child } = await startChild('src/main.js', env);
  try {
    return await fn({ url, pid: child.pid!, env });
  } finally {
    await stopChild(child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

interface Round {
  perSec: number;
  cpuUs: number;
  failed: number;
}

/** (a) One round of closed-loop appends, with or without a condition on the client's own tag. */
async function appendRound(url: string, key: string, conditional: boolean, pid: number, seconds: number, label: string): Promise<Round> {
  const last = new Array<number>(CLIENTS).fill(0);
  let done = 0;
  let failed = 0;
  const cpu0 = cpuMsOf(pid);
  const perSec = await closedLoop(CLIENTS, seconds, async (w, i) => {
    const tag = `client:${label}-${w}`;
    const res = await call(`${url}/events`, 'POST', key, {
      aggregateId: `acct-${label}-${w}-${i % AGGREGATES_PER_CLIENT}`,
      eventType: 'Deposited',
      data: { amount: 10, i },
      tags: [tag],
      ...(conditional ? { condition: { failIfEventsMatch: { items: [{ types: ['Deposited'], tags: [tag] }] }, after: last[w] } } : {}),
    });
    done++;
    if (res.status === 201) last[w] = res.body.position;
    else failed++;
  });
  return { perSec, cpuUs: ((cpuMsOf(pid) - cpu0) * 1000) / Math.max(1, done), failed };
}

async function partA(kind: string, pg: () => Promise<ThrowawayPostgres>): Promise<void> {
  await withService(kind, pg, async ({ url, pid }) => {
    const { apiKey } = await adminPost(url, '/admin/tenants', { name: 'bench-dcb-a' });
    await appendRound(url, apiKey, false, pid, 2, 'warm-p'); // warm-up of both paths: JIT, statement caches, indexes
    await appendRound(url, apiKey, true, pid, 2, 'warm-c');
    const plain: Round[] = [];
    const cond: Round[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? [false, true] : [true, false];
      for (const conditional of order) {
        const round = await appendRound(url, apiKey, conditional, pid, SECONDS, `r${r}${conditional ? 'c' : 'p'}`);
        (conditional ? cond : plain).push(round);
      }
    }
    const ratios = cond.map((c, i) => c.perSec / plain[i].perSec);
    console.log(`\n(a) ${kind}: ${CLIENTS} clients, ${ROUNDS} pairs of ${SECONDS} s, median [min–max]`);
    console.log('| appends | appends/s | service CPU per append (µs) | not 201 |');
    console.log('|---|---:|---:|---:|');
    const row = (name: string, rs: Round[]) =>
      console.log(
        `| ${name} | ${spread(rs.map((x) => x.perSec))} | ${spread(rs.map((x) => x.cpuUs))} | ${rs.reduce((n, x) => n + x.failed, 0)} |`,
      );
    row('plain, one tag (baseline)', plain);
    row('conditional on the client’s tag', cond);
    console.log(`conditional ÷ plain per pair: ${ratios.map((x) => fmt(x, 2)).join(' / ')} (target ≥ 0.8)`);
  });
}

/** (b) DCB clients on unrelated tags: read the last event of the tag, append after it. */
async function partB(kind: string, pg: () => Promise<ThrowawayPostgres>): Promise<void> {
  await withService(kind, pg, async ({ url }) => {
    const { apiKey } = await adminPost(url, '/admin/tenants', { name: 'bench-dcb-b' });
    let attempts = 0;
    let conflicts = 0;
    const other: number[] = [];
    const perSec = await closedLoop(CLIENTS, SECONDS, async (w, i) => {
      const items = [{ tags: [`counter:${w}`] }];
      const read = await call(`${url}/events/query`, 'POST', apiKey, { items, direction: 'backward', limit: 1 });
      if (read.status !== 200) throw new Error(`POST /events/query: ${read.status} ${JSON.stringify(read.body)}`);
      const lastEvent = read.body.events[0];
      const res = await call(`${url}/events`, 'POST', apiKey, {
        aggregateId: `counter-${w}`,
        eventType: 'Counted',
        data: { n: i },
        tags: [`counter:${w}`],
        condition: { failIfEventsMatch: { items }, ...(lastEvent ? { after: lastEvent.position } : {}) },
      });
      attempts++;
      if (res.status === 409 && res.body?.error === 'APPEND_CONDITION_FAILED') conflicts++;
      else if (res.status !== 201) other.push(res.status);
    });
    console.log(
      `\n(b) ${kind}: ${CLIENTS} writers on unrelated tags, ${SECONDS} s: ${fmt(attempts)} conditional appends ` +
        `(${fmt(perSec)} read+append cycles/s), false conflicts ${conflicts} (${fmt((conflicts / Math.max(1, attempts)) * 100, 3)} %, target 0)` +
        (other.length ? `, other answers: ${[...new Set(other)].join(', ')}` : ''),
    );
  });
}

/** (c) The seed: BENCH_EVENTS events of aggregates of 100, one in 100 `Rare` tagged `rare`. */
async function seed(store: Store, tenantId: string): Promise<void> {
  const started = Date.now();
  let n = 0;
  for (let c = 0; n < EVENTS; c++) {
    const requests = [];
    for (let r = 0; r < PER_CALL / PER_AGGREGATE && n < EVENTS; r++) {
      const agg = n / PER_AGGREGATE;
      const events = [];
      for (let k = 0; k < PER_AGGREGATE && n < EVENTS; k++, n++) {
        const rare = n % 100 === 7;
        events.push({
          eventType: rare ? 'Rare' : 'MoneyDeposited',
          data: `{"amount":${n % 1000},"note":"seeded event ${n}"}`,
          tags: rare ? [`account:${agg}`, 'rare'] : [`account:${agg}`],
        });
      }
      requests.push({ tenantId, aggregateId: `account-${agg}`, aggregateType: 'account', inferredType: 'account', events });
    }
    const outcomes = await store.events.appendMany(requests);
    if (outcomes.some((o) => !o.ok)) throw new Error(`seed call ${c} failed: ${JSON.stringify(outcomes.find((o) => !o.ok))}`);
  }
  console.log(`seeded ${fmt(EVENTS)} events in ${fmt((Date.now() - started) / 1000, 1)} s (not counted)`);
}

/** Every match, pages of 1,000, from position 0: events/s. */
async function readPass(what: string, page: (after: number) => Promise<{ status: number; body: any }>): Promise<number> {
  let after = 0;
  let events = 0;
  const t0 = process.hrtime.bigint();
  for (;;) {
    const res = await page(after);
    if (res.status !== 200) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    events += res.body.events.length;
    if (res.body.events.length === 0) break;
    after = res.body.nextAfterPosition;
  }
  if (events !== RARE) throw new Error(`${what}: read ${events} events, expected ${RARE}`);
  return events / (Number(process.hrtime.bigint() - t0) / 1e9);
}

async function partC(pg: () => Promise<ThrowawayPostgres>): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-dcb-read-'));
  const databaseUrl = READ_STORE === 'postgres' ? await (await pg()).createDatabase('bench_dcb_read') : undefined;
  const env = {
    DATA_DIR: dataDir,
    ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    LOG_LEVEL: 'error',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  };
  // The tenant through the service; the seed with the service stopped (its head cache must not be stale), as event-log.bench does.
  let svc = await startChild('src/main.js', env);
  try {
    const created = await adminPost(svc.url, '/admin/tenants', { name: 'bench-dcb-c' });
    await stopChild(svc.child);
    const store = await openStore({ dataDir, databaseUrl, lanePoolSize: 2 });
    try {
      await seed(store, created.tenantId);
    } finally {
      await store.close();
    }
    svc = await startChild('src/main.js', env);
    const { url } = svc;
    const key = created.apiKey;
    const kinds: [string, (after: number) => Promise<{ status: number; body: any }>][] = [
      ['baseline: GET /events?eventType=Rare', (a) => call(`${url}/events?afterPosition=${a}&limit=1000&eventType=Rare`, 'GET', key)],
      [
        'POST /events/query {types:[Rare]}',
        (a) => call(`${url}/events/query`, 'POST', key, { items: [{ types: ['Rare'] }], afterPosition: a, limit: 1000 }),
      ],
      [
        'POST /events/query {tags:[rare]}',
        (a) => call(`${url}/events/query`, 'POST', key, { items: [{ tags: ['rare'] }], afterPosition: a, limit: 1000 }),
      ],
    ];
    const results = new Map<string, number[]>(kinds.map(([k]) => [k, []]));
    for (const [k, page] of kinds) await readPass(k, page); // warm-up: page cache, plans
    for (let run = 0; run < RUNS; run++) for (const [k, page] of kinds) results.get(k)!.push(await readPass(k, page));
    console.log(
      `\n(c) ${READ_STORE}: one tenant of ${fmt(EVENTS)} events, the 1 % (${fmt(RARE)}) read in pages of 1,000, ${RUNS} runs: median [min–max]`,
    );
    console.log('| read | events/s |');
    console.log('|---|---:|');
    for (const [k, xs] of results) console.log(`| ${k} | ${spread(xs)} |`);
  } finally {
    await stopChild(svc.child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(
    `# DCB benchmark — ${new Date().toISOString()}, ${os.cpus().length} cores, node ${process.version}, parts ${PARTS.join(',')}`,
  );
  let pg: Promise<ThrowawayPostgres> | undefined;
  const pgOnce = () => (pg ??= ThrowawayPostgres.start());
  try {
    for (const kind of STORES) {
      if (PARTS.includes('a')) await partA(kind, pgOnce);
      if (PARTS.includes('b')) await partB(kind, pgOnce);
    }
    if (PARTS.includes('c')) await partC(pgOnce);
  } finally {
    if (pg) await (await pg).stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
