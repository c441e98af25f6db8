/**
 * Issue 25 item 3: the lane schedulers alone (no HTTP, store or .NET), so that the figure is the
 * scheduler's and a busy machine moves it less. Each checkout's built scheduler (BENCH_SERVICE_DIR:
 * another built checkout, measured first in the same run) against a Redis of its own per run.
 *
 *  1. live: one tenant wakes RATE distinct lanes/s (over KEYS keys) for SECONDS; each run takes
 *     RUN_MS (what Apply + the state write cost, simulated); figure: wake → run finished, p50 / p99,
 *     and this process's CPU per lane (the scheduler's own work: ioredis, BullMQ, the fair queue).
 *  2. catch-up: tenant A wakes BACKLOG lanes at once; tenant B wakes one lane every 50 ms while A's
 *     backlog drains; figure: B's wake → run finished, p50 / max, and A's lanes/s.
 * With LANE_CONCURRENCY's and LANE_MAX_IN_FLIGHT_PER_TENANT's defaults (64, 32); RUNS rounds.
 *
 *   npm run build && BENCH_SERVICE_DIR=/work/base RUNS=3 node dist/bench/bullmq-lanes.bench.js
 *   ONLY=base MODES=bullmq RUNS=1 BENCH_SERVICE_DIR=/work/base node --cpu-prof --cpu-prof-dir=/tmp/prof dist/bench/bullmq-lanes.bench.js
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { ThrowawayRedis } from '../test/support/throwaway-redis';
import { checkoutsUnderTest, cpuMsOf, fmt, pct } from './bench-util';

const RATE = Number(process.env.RATE ?? 1000);
const SECONDS = Number(process.env.SECONDS ?? 10);
const RUN_MS = Number(process.env.RUN_MS ?? 5);
const KEYS = Number(process.env.KEYS ?? 2000);
const BACKLOG = Number(process.env.BACKLOG ?? 20_000);
const RUNS = Number(process.env.RUNS ?? 3);
const MODES = (process.env.MODES ?? 'bullmq,in-process').split(',');
/** Only this checkout ('base' or 'this'): for a CPU profile of one. */
const ONLY = process.env.ONLY;
const CONCURRENCY = 64;
const CAP = 32;

interface Lane {
  tenantId: string;
  versionId: string;
  key: string;
}
interface Scheduler {
  wake(l: Lane): Promise<void>;
  wakeMany(l: Lane[]): Promise<void>;
  start(h: (l: Lane) => Promise<{ status: 'idle' }>): Promise<void>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function makeScheduler(dir: string, mode: string, redisUrl: string): Promise<Scheduler> {
  if (mode === 'bullmq') {
    const { BullmqLaneScheduler } = await import(path.join(dir, 'dist', 'src', 'lanes', 'bullmq-lane-scheduler.js'));
    return new BullmqLaneScheduler({ redisUrl, concurrency: CONCURRENCY, maxInFlightPerTenant: CAP, lockMs: 3000 });
  }
  const { InProcessLaneScheduler } = await import(path.join(dir, 'dist', 'src', 'lanes', 'in-process-lane-scheduler.js'));
  return new InProcessLaneScheduler({ concurrency: CONCURRENCY, maxInFlightPerTenant: CAP });
}

/** Wakes RATE lanes/s of one tenant; each run takes RUN_MS. */
async function live(s: Scheduler, redisPid?: number): Promise<{ lat: number[]; cpuUsPerLane: number; redisUsPerLane: number }> {
  const wokenAt = new Map<string, number>();
  const lat: number[] = [];
  await s.start(async (l) => {
    const t = wokenAt.get(l.key);
    wokenAt.delete(l.key);
    await sleep(RUN_MS);
    if (t !== undefined) lat.push(performance.now() - t);
    return { status: 'idle' };
  });
  const cpu0 = process.cpuUsage();
  const redis0 = redisPid ? cpuMsOf(redisPid) : 0;
  const total = RATE * SECONDS;
  const start = performance.now();
  for (let i = 0; i < total; i++) {
    const wait = start + (i * 1000) / RATE - performance.now();
    if (wait > 0) await sleep(wait);
    const key = `k${i % KEYS}`;
    if (!wokenAt.has(key)) wokenAt.set(key, performance.now());
    void s.wake({ tenantId: 'live', versionId: 'v', key });
  }
  const deadline = Date.now() + 120_000;
  while (wokenAt.size > 0 && Date.now() < deadline) await sleep(20);
  const cpu = process.cpuUsage(cpu0);
  const redisUsPerLane = redisPid ? ((cpuMsOf(redisPid) - redis0) * 1000) / total : 0;
  return { lat, cpuUsPerLane: (cpu.user + cpu.system) / total, redisUsPerLane };
}

/** A's BACKLOG lanes at once; B one lane every 50 ms until A's are done. */
async function catchUp(s: Scheduler): Promise<{ bLat: number[]; aRate: number }> {
  let aDone = 0;
  const bWoken = new Map<string, number>();
  const bLat: number[] = [];
  await s.start(async (l) => {
    await sleep(RUN_MS);
    if (l.tenantId === 'a') aDone++;
    else {
      const t = bWoken.get(l.key);
      bWoken.delete(l.key);
      if (t !== undefined) bLat.push(performance.now() - t);
    }
    return { status: 'idle' };
  });
  const t0 = performance.now();
  await s.wakeMany(Array.from({ length: BACKLOG }, (_, i) => ({ tenantId: 'a', versionId: 'v', key: `a${i}` })));
  for (let i = 0; aDone < BACKLOG && performance.now() - t0 < 300_000; i++) {
    const key = `b${i}`;
    bWoken.set(key, performance.now());
    void s.wake({ tenantId: 'b', versionId: 'v', key });
    await sleep(50);
  }
  const aRate = aDone / ((performance.now() - t0) / 1000);
  const deadline = Date.now() + 30_000;
  while (bWoken.size > 0 && Date.now() < deadline) await sleep(20);
  return { bLat, aRate };
}

async function main(): Promise<void> {
  console.log(
    `# lane schedulers alone — ${new Date().toISOString()}, ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)}, node ${process.version}; ` +
      `concurrency ${CONCURRENCY}, cap ${CAP}; live ${fmt(RATE)} lanes/s × ${SECONDS} s over ${fmt(KEYS)} keys, runs of ${RUN_MS} ms; catch-up ${fmt(BACKLOG)} lanes`,
  );
  for (let run = 1; run <= RUNS; run++) {
    for (const c of checkoutsUnderTest().filter((x) => !ONLY || x.label === ONLY)) {
      for (const mode of MODES) {
        if (mode === 'in-process' && c.label !== 'this') continue; // the reference; unchanged by this slice
        const redis = mode === 'bullmq' ? await ThrowawayRedis.start() : undefined;
        try {
          const s1 = await makeScheduler(c.dir, mode, redis?.url ?? '');
          // The Redis server's CPU too (its Lua scripts are the other half of a BullMQ job's cost).
          const l = await live(s1, (redis as unknown as { child?: { pid?: number } } | undefined)?.child?.pid);
          await s1.close();
          await redis?.flushAll();
          const s2 = await makeScheduler(c.dir, mode, redis?.url ?? '');
          const cu = await catchUp(s2);
          await s2.close();
          console.log(
            `run ${run} ${c.label} ${mode}: live wake → ran p50 ${fmt(pct(l.lat, 50), 1)} ms, p99 ${fmt(pct(l.lat, 99), 1)} ms (${fmt(l.lat.length)} lanes), ` +
              `CPU per lane ${fmt(l.cpuUsPerLane, 0)} µs + Redis ${fmt(l.redisUsPerLane, 0)} µs; catch-up: A ${fmt(cu.aRate)} lanes/s, B wake → ran p50 ${fmt(pct(cu.bLat, 50), 1)} ms, max ${fmt(Math.max(...cu.bLat), 1)} ms (${cu.bLat.length} lanes); load ${os.loadavg()[0].toFixed(1)}`,
          );
        } finally {
          await redis?.stop();
        }
      }
    }
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
