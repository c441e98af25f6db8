/**
 * Issue 15 (item 4): does an append cost more when its tenant has many projections?
 *
 * One service (a child process, SQLite, in-process lanes) per checkout and projection count. Tenant
 * A has the bank-account reducer and PROJECTIONS small projections (each keyed by the account, a
 * bounded tally as state); tenant B has the same reducer and no projection. The appends' aggregate
 * ids (`A-n`, `B-n`) infer the type `a`/`b`, not the reducer's `account`: no reducer runs on them,
 * so the figures measure the store and the lanes, not the executor's request-first ordering. Then, BENCH_RUNS times
 * in the same service: A and B append at once, each from one sequential loop (one request in
 * flight, as the issue measured; RATE=n caps each loop at n/s) for BENCH_SECONDS; the latencies of
 * each, then the time until every projection's every state shows every append (drain; it includes
 * reading those states back: ~3 s for 200 projections × 50 keys) before the next run.
 *
 * Each checkout is measured with 1 projection and with PROJECTIONS (default 200), alternating.
 * BENCH_SERVICE_DIR: another built checkout measured in the same run (the code before a change).
 * BENCH_POSTGRES=1: on PostgreSQL (a throwaway server, a fresh database per service) instead of SQLite.
 *
 *   npm run bench:projection-fanout
 *   BENCH_SERVICE_DIR=/work/wt/base BENCH_RUNS=3 node dist/bench/projection-fanout.bench.js
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { exampleSources } from '../test/support/runtime-harness';
import { ThrowawayPostgres } from '../test/support/throwaway-postgres';
import { zipSources } from '../test/support/zip-writer';
import {
  adminPost,
  BENCH_ADMIN_TOKEN,
  call,
  Checkout,
  checkoutsUnderTest,
  cpuMsOf,
  fmt,
  median,
  pct,
  startChild,
  stopChild,
} from './bench-util';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const PROJECTIONS = Number(process.env.BENCH_PROJECTIONS ?? 200);
const ACCOUNTS = 50;
const RATE = Number(process.env.RATE ?? 0);
const serviceEnv = JSON.parse(process.env.SERVICE_ENV ?? '{}') as Record<string, string>;

const checkouts = checkoutsUnderTest();
let postgres: Promise<ThrowawayPostgres> | undefined;
const storeEnv = async (): Promise<Record<string, string>> =>
  process.env.BENCH_POSTGRES === '1'
    ? { DATABASE_URL: await (postgres ??= ThrowawayPostgres.start()).then((pg) => pg.createDatabase('bench_fanout')) }
    : {};

const tally = (n: number) => `
using EventSourcing;
namespace Fan${n}
{
    public sealed class Tally { public long Count { get; set; } public decimal Total { get; set; } }
    public sealed record Deposit(decimal Amount);
    [ProjectionName("fan-${n}")]
    public sealed class Fan${n}Projection : IProjection<Tally>
    {
        public string? ResolveKey(Event e) => e.AggregateId;
        public Tally Apply(Tally s, Event e) { s.Count++; s.Total += e.DataAs<Deposit>().Amount; return s; }
    }
}`;

async function upload(url: string, key: string, kind: 'reducers' | 'projections', zip: Buffer): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const form = new FormData();
    form.append('file', new Blob([zip], { type: 'application/zip' }), `${kind}.zip`);
    const res = await fetch(`${url}/${kind}/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
    const body = (await res.json()) as any;
    if (res.status === 202 || res.status === 201) return body.reducerId ?? body.uploadId;
    if (res.status === 429 && attempt < 200) {
      await new Promise((r) => setTimeout(r, 500));
      continue;
    }
    throw new Error(`upload ${kind}: ${res.status} ${JSON.stringify(body)}`);
  }
}

async function compiled(url: string, key: string, kind: 'reducers' | 'projections', id: string): Promise<any> {
  for (;;) {
    const st = await call(`${url}/${kind}/${id}/status`, 'GET', key);
    if (st.body?.status === 'failed') throw new Error(`${kind} ${id}: ${JSON.stringify(st.body)}`);
    if (
      kind === 'reducers'
        ? st.body?.status === 'compiled' || st.body?.status === 'active'
        : st.body?.projectionId && st.body?.status !== 'compiling' && st.body?.status !== 'pending_compilation'
    )
      return st.body;
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function each<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < items.length; i = next++) await work(items[i]);
    }),
  );
}

const deposit = (tag: string, n: number) => ({ aggregateId: `${tag}-${n % ACCOUNTS}`, eventType: 'MoneyDeposited', data: { amount: 1 } });

/**
 * One request in flight at a time for `seconds` (RATE unset: each right after the last, as the
 * issue measured; RATE=n: at most n per second, so that the lanes keep up); the latencies of the
 * 201s (any other answer fails the bench).
 */
async function sequential(url: string, key: string, tag: string, seconds: number, from: number): Promise<{ lat: number[]; next: number }> {
  const lat: number[] = [];
  const end = Date.now() + seconds * 1000;
  let n = from;
  while (Date.now() < end) {
    const t = performance.now();
    const r = await call(`${url}/events`, 'POST', key, deposit(tag, n++));
    if (r.status !== 201) throw new Error(`append: ${r.status} ${JSON.stringify(r.body)}`);
    lat.push(performance.now() - t);
    if (RATE > 0) await new Promise((res) => setTimeout(res, Math.max(0, 1000 / RATE - (performance.now() - t))));
  }
  return { lat, next: n };
}

/** Until every projection shows, for every account, as many deposits as were appended to it. */
async function drained(url: string, key: string, projectionIds: string[], appended: number): Promise<number> {
  const started = Date.now();
  const expected = (account: number) => Math.floor(appended / ACCOUNTS) + (account < appended % ACCOUNTS ? 1 : 0);
  for (const id of projectionIds) {
    for (let a = 0; a < ACCOUNTS; a++) {
      for (;;) {
        const r = await call(`${url}/projections/${id}/state/A-${a}`, 'GET', key);
        const count = Number(r.body?.state?.count ?? r.body?.state?.Count ?? -1);
        if (r.status === 200 && count === expected(a)) break;
        if (Date.now() - started > 600_000)
          throw new Error(`projection ${id} did not catch up in 10 min (A-${a}: ${JSON.stringify(r.body)})`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }
  return (Date.now() - started) / 1000;
}

interface RunFigures {
  a: { p50: number; p99: number; count: number };
  b: { p50: number; p99: number; count: number };
  drainS: number;
  serviceCpuPct: number;
}

async function measure(c: Checkout, projections: number): Promise<RunFigures[]> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-fanout-'));
  const { url, child } = await startChild(path.join(c.dir, 'dist', 'src', 'main.js'), {
    DATA_DIR: dataDir,
    ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    QUOTA_PROJECTIONS: '0',
    ...(await storeEnv()),
    ...serviceEnv,
  });
  try {
    const a = (await adminPost(url, '/admin/tenants', { name: 'fanout-a' })).apiKey as string;
    const b = (await adminPost(url, '/admin/tenants', { name: 'fanout-b' })).apiKey as string;
    const bank = zipSources(exampleSources('bank-account'));
    for (const key of [a, b]) await compiled(url, key, 'reducers', await upload(url, key, 'reducers', bank));
    const projectionIds: string[] = [];
    const setup = Date.now();
    await each(
      Array.from({ length: projections }, (_, i) => i),
      4,
      async (i) => {
        const id = await upload(url, a, 'projections', zipSources([{ path: `Fan${i}.cs`, content: tally(i) }]));
        projectionIds.push((await compiled(url, a, 'projections', id)).projectionId);
      },
    );
    console.log(`  ${c.label}, ${projections} projection(s): deployed in ${fmt((Date.now() - setup) / 1000, 0)} s`);
    // Warm-up: every account once for both tenants, and the lanes caught up.
    let nextA = 0;
    let nextB = 0;
    for (; nextA < ACCOUNTS; nextA++) await call(`${url}/events`, 'POST', a, deposit('A', nextA));
    for (; nextB < ACCOUNTS; nextB++) await call(`${url}/events`, 'POST', b, deposit('B', nextB));
    await drained(url, a, projectionIds, nextA);
    const out: RunFigures[] = [];
    for (let run = 1; run <= RUNS; run++) {
      const cpu0 = cpuMsOf(child.pid!);
      const t0 = Date.now();
      // BENCH_PROFILE=1: a SIGUSR2 at the start and end of each run (a --require'd profiler in SERVICE_ENV takes them).
      if (process.env.BENCH_PROFILE) child.kill('SIGUSR2');
      const [ra, rb] = await Promise.all([sequential(url, a, 'A', SECONDS, nextA), sequential(url, b, 'B', SECONDS, nextB)]);
      if (process.env.BENCH_PROFILE) child.kill('SIGUSR2');
      const serviceCpuPct = ((cpuMsOf(child.pid!) - cpu0) / (Date.now() - t0)) * 100;
      nextA = ra.next;
      nextB = rb.next;
      const drainS = await drained(url, a, projectionIds, nextA);
      const f: RunFigures = {
        a: { p50: median(ra.lat), p99: pct(ra.lat, 99), count: ra.lat.length },
        b: { p50: median(rb.lat), p99: pct(rb.lat, 99), count: rb.lat.length },
        drainS,
        serviceCpuPct,
      };
      console.log(
        `  run ${run}: A ${f.a.count} appends p50 ${fmt(f.a.p50, 1)} p99 ${fmt(f.a.p99, 1)} ms · B ${f.b.count} appends p50 ${fmt(f.b.p50, 1)} p99 ${fmt(f.b.p99, 1)} ms · ` +
          `service CPU ${fmt(serviceCpuPct, 0)} % · lanes drained ${fmt(drainS, 1)} s after`,
      );
      out.push(f);
    }
    return out;
  } finally {
    await stopChild(child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const spread = (xs: number[], d = 1) => `${fmt(median(xs), d)} (${fmt(Math.min(...xs), d)}–${fmt(Math.max(...xs), d)})`;

async function main() {
  console.log(
    `# projection fan-out (${process.env.BENCH_POSTGRES === '1' ? 'PostgreSQL' : 'SQLite'}) — ${new Date().toISOString()}, ${os.cpus().length} cores, node ${process.version}; ${RUNS} runs × ${SECONDS} s, sequential appends of A and B at once${RATE ? `, each at most ${RATE}/s` : ', each as fast as it goes'}`,
  );
  const results = new Map<string, RunFigures[]>();
  for (const c of checkouts) {
    for (const n of [1, PROJECTIONS]) {
      console.log(`${c.label}: tenant A with ${n} projection(s)`);
      results.set(`${c.label} ${n}`, await measure(c, n));
    }
  }
  console.log('\nmedian (min–max) over runs, ms');
  console.log("| checkout | A's projections | A p50 | A p99 | B p50 | B p99 | A appends/s | drain s |");
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const [label, rs] of results) {
    const [c, n] = label.split(' ');
    console.log(
      `| ${c} | ${n} | ${spread(rs.map((r) => r.a.p50))} | ${spread(rs.map((r) => r.a.p99))} | ${spread(rs.map((r) => r.b.p50))} | ${spread(rs.map((r) => r.b.p99))} | ${spread(
        rs.map((r) => r.a.count / SECONDS),
        0,
      )} | ${spread(rs.map((r) => r.drainS))} |`,
    );
  }
  if (postgres) await (await postgres).stop();
}

void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
