/**
 * Issue 15 (benchmarks): while tenant A catches up a projection over KEYS keys (default 100,000:
 * one event per key, appended beforehand in batches of 1,000), how long does tenant B wait for its
 * own state changes to become readable? B has a caught-up projection and appends at B_RATE/s; for
 * each append, the time from its 201 to GET /projections/{id}/state/{key} showing it (polled every
 * 5 ms). Target: ≤ 1 s, with the fair lane scheduling of issue 12.
 *
 * One service (a child process, SQLite, in-process lanes unless SERVICE_ENV says otherwise) per
 * run; BENCH_RUNS runs. BENCH_SERVICE_DIR: another built checkout measured in the same run.
 * BENCH_LANES=bullmq: BullMQ lanes (a Redis of its own per service, started here), else in-process.
 *
 *   npm run bench:projection-catch-up
 *   KEYS=100000 BENCH_RUNS=3 node dist/bench/projection-catch-up.bench.js
 *   BENCH_LANES=bullmq BENCH_SERVICE_DIR=/work/base node dist/bench/projection-catch-up.bench.js
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ThrowawayRedis } from '../test/support/throwaway-redis';
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
const KEYS = Number(process.env.KEYS ?? 100_000);
const B_RATE = Number(process.env.B_RATE ?? 20);
const serviceEnv = JSON.parse(process.env.SERVICE_ENV ?? '{}') as Record<string, string>;
const BULLMQ = process.env.BENCH_LANES === 'bullmq';

const checkouts = checkoutsUnderTest();

const projection = (name: string, key: string) => `
using EventSourcing;
namespace P${name.replace(/\W/g, '')}
{
    public sealed class Tally { public long Count { get; set; } }
    public sealed record Item(string K);
    [ProjectionName("${name}")]
    public sealed class TallyProjection : IProjection<Tally>
    {
        public string? ResolveKey(Event e) => ${key};
        public Tally Apply(Tally s, Event e) { s.Count++; return s; }
    }
}`;

async function deploy(url: string, key: string, source: string): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([zipSources([{ path: 'P.cs', content: source }])], { type: 'application/zip' }), 'p.zip');
  const res = await fetch(`${url}/projections/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
  const { uploadId } = (await res.json()) as { uploadId: string };
  for (;;) {
    const st = await call(`${url}/projections/${uploadId}/status`, 'GET', key);
    if (st.body?.status === 'failed') throw new Error(JSON.stringify(st.body));
    if (st.body?.projectionId && st.body?.status !== 'compiling' && st.body?.status !== 'pending_compilation') return st.body.projectionId;
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface RunFigures {
  lat: number[];
  catchUpS: number;
  appendedS: number;
}

async function once(c: Checkout): Promise<RunFigures> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-catchup-'));
  const redis = BULLMQ ? await ThrowawayRedis.start() : undefined;
  const { url, child } = await startChild(path.join(c.dir, 'dist', 'src', 'main.js'), {
    DATA_DIR: dataDir,
    ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    QUOTA_KEYS_PER_PROJECTION: '0',
    ...(redis ? { REDIS_URL: redis.url } : {}),
    ...serviceEnv,
  });
  try {
    const a = (await adminPost(url, '/admin/tenants', { name: 'catch-up-a' })) as { apiKey: string; tenantId: string };
    const b = (await adminPost(url, '/admin/tenants', { name: 'catch-up-b' })).apiKey as string;
    const t0 = Date.now();
    for (let from = 0; from < KEYS; from += 1000) {
      const events = Array.from({ length: Math.min(1000, KEYS - from) }, (_, i) => ({ eventType: 'Item', data: { k: `key-${from + i}` } }));
      const r = await call(`${url}/events/batch`, 'POST', a.apiKey, { aggregateId: `history-${from / 1000}`, events });
      if (r.status !== 201) throw new Error(`batch: ${r.status} ${JSON.stringify(r.body)}`);
    }
    const appendedS = (Date.now() - t0) / 1000;
    const bProjection = await deploy(url, b, projection('b-tally', 'e.AggregateId'));
    // Warm B: one append readable.
    await call(`${url}/events`, 'POST', b, { aggregateId: 'b-0', eventType: 'Tick', data: {} });
    const counts = new Map<string, number>([['b-0', 1]]);
    const readable = async (key: string, count: number) => {
      for (;;) {
        const r = await call(`${url}/projections/${bProjection}/state/${key}`, 'GET', b);
        if (r.status === 200 && Number(r.body.state.count ?? r.body.state.Count) >= count) return;
        await new Promise((res) => setTimeout(res, 5));
      }
    };
    await readable('b-0', 1);

    // A deploys over its history: KEYS lanes to create and apply.
    const catchUpStart = Date.now();
    const aProjection = await deploy(url, a.apiKey, projection('a-keys', 'e.DataAs<Item>().K'));
    let caughtUp = 0;
    const lat: number[] = [];
    const waits: Promise<void>[] = [];
    for (let i = 0; caughtUp === 0 || i < B_RATE; i++) {
      const key = `b-${i % 10}`;
      const next = (counts.get(key) ?? 0) + 1;
      counts.set(key, next);
      const sent = Date.now();
      const r = await call(`${url}/events`, 'POST', b, { aggregateId: key, eventType: 'Tick', data: {} });
      if (r.status !== 201) throw new Error(`B append: ${r.status}`);
      const acked = performance.now();
      waits.push(readable(key, next).then(() => void lat.push(performance.now() - acked)));
      if (caughtUp === 0) {
        // 202 while the projection catches up, 200 once it has (the contract's rule).
        const st = await call(`${url}/projections/${aProjection}/state/key-${KEYS - 1}`, 'GET', a.apiKey);
        if (st.status === 200) caughtUp = Date.now();
      }
      if (Date.now() - catchUpStart > 900_000) throw new Error('A did not catch up in 15 min');
      await new Promise((res) => setTimeout(res, Math.max(0, 1000 / B_RATE - (Date.now() - sent))));
    }
    await Promise.all(waits);
    return { lat, catchUpS: (caughtUp - catchUpStart) / 1000, appendedS };
  } finally {
    await stopChild(child);
    await redis?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  console.log(
    `# projection catch-up — ${new Date().toISOString()}, ${os.cpus().length} cores, node ${process.version}; A catches up ${fmt(KEYS)} keys, B appends ${B_RATE}/s, ${BULLMQ ? 'BullMQ' : 'in-process'} lanes`,
  );
  const all = new Map<string, RunFigures[]>(checkouts.map((c) => [c.label, []]));
  for (let run = 1; run <= RUNS; run++) {
    for (const c of checkouts) {
      const cpu0 = cpuMsOf(process.pid);
      const f = await once(c);
      all.get(c.label)!.push(f);
      console.log(
        `run ${run} ${c.label}: A's ${fmt(KEYS)} events appended in ${fmt(f.appendedS, 0)} s, caught up in ${fmt(f.catchUpS, 1)} s; ` +
          `B's ${f.lat.length} changes ack → readable p50 ${fmt(pct(f.lat, 50), 0)} ms, p99 ${fmt(pct(f.lat, 99), 0)} ms, max ${fmt(Math.max(...f.lat), 0)} ms (bench CPU ${fmt(cpuMsOf(process.pid) - cpu0, 0)} ms)`,
      );
    }
  }
  console.log('\n| checkout | A caught up, s | B ack → readable p50 | p99 | max (ms) |');
  console.log('|---|---:|---:|---:|---:|');
  for (const [label, rs] of all) {
    for (const f of rs)
      console.log(
        `| ${label} | ${fmt(f.catchUpS, 1)} | ${fmt(median(f.lat), 0)} | ${fmt(pct(f.lat, 99), 0)} | ${fmt(Math.max(...f.lat), 0)} |`,
      );
  }
}

void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
