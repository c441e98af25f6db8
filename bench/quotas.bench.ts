import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import autocannon from 'autocannon';
import { connectQuotaRedis } from '../src/quotas/quota-redis';
import { InProcessConcurrencyLimiter } from '../src/quotas/in-process-concurrency-limiter';
import { InProcessRateLimiter } from '../src/quotas/in-process-rate-limiter';
import { TenantLimits } from '../src/config/quota-policy';
import { RateLimiter } from '../src/quotas/rate-limiter.port';
import { RedisRateLimiter } from '../src/quotas/redis-rate-limiter';
import { StoredEventsGauge } from '../src/quotas/stored-events-gauge';
import { TenantLimitsCatalog } from '../src/quotas/tenant-limits';
import { TenantQuotas } from '../src/quotas/tenant-quotas';
import { ADMIN_TOKEN, startService } from '../test/support/service-harness';
import { ThrowawayRedis } from '../test/support/throwaway-redis';
import { cpuMsOf, DURATION_S, fmt, hammer, HttpFigures, NO_QUOTAS, startChild, stopChild } from './bench-util';

/**
 * What per-tenant quotas cost and what they buy, on SQLite:
 *  0. the check itself, in this process: an append's two checks (request + events), in µs;
 *  1. the append rate of one tenant with quotas off, with the in-process buckets, and with the
 *     Redis buckets (limits high enough never to refuse: the figure is the cost of the check), as
 *     separate server processes over HTTP, and as server CPU per append measured in pairs: the three
 *     services in this process, batches of appends through each in turn (Fastify's inject, no
 *     network), so that a busy shared machine weighs on all three alike;
 *  2. noisy neighbour: tenant B appends 50/s alone, then while tenant A appends as fast as it can;
 *     with quotas (A over its quota gets 429s) and without (A takes what it can).
 * BENCH_SECONDS (default 10) per figure; BENCH_ROUNDS (default 2) alternating rounds for (1).
 */
const ADMIN = 'bench-admin-token-0123456789';
const B_RATE = 50;
/** A's quota in the noisy-neighbour run: the default unless BENCH_A_QUOTA says otherwise. */
const A_QUOTA = process.env.BENCH_A_QUOTA ?? '20000/10s';
const HIGH = { QUOTA_APPEND_REQUESTS: '1000000000/10s', QUOTA_APPEND_EVENTS: '1000000000/10s' };

const single = (i: number) => ({ aggregateId: `acct-${i % 5000}`, eventType: 'Deposited', data: { amount: 10, i } });

async function tenant(url: string, name: string): Promise<string> {
  const res = await fetch(`${url}/admin/tenants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  return ((await res.json()) as { apiKey: string }).apiKey;
}

/**
 * The noisy-neighbour runs keep SQLite on tmpfs when there is one: what they measure is CPU shared
 * between tenants, and on a shared machine the disk's fsync stalls (hundreds of ms, whoever else is
 * writing) would otherwise decide B's p99 alone and beside A alike.
 */
const NEIGHBOUR_DIR = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();

async function withService<T>(env: Record<string, string>, fn: (url: string, pid: number) => Promise<T>, dir = os.tmpdir()): Promise<T> {
  const dataDir = fs.mkdtempSync(path.join(dir, 'es-bench-quota-'));
  const { url, child } = await startChild('src/main.js', { ADMIN_TOKEN: ADMIN, DATA_DIR: dataDir, ...env });
  try {
    await settled(child.pid!);
    return await fn(url, child.pid!);
  } finally {
    await stopChild(child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Waits (up to 30 s) until the server is idle: it warms its compilers at start, which would weigh on the first figure. */
async function settled(pid: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const before = cpuMsOf(pid);
    await new Promise((r) => setTimeout(r, 1_000));
    if (cpuMsOf(pid) - before < 50) return;
  }
}

async function appendRate(env: Record<string, string>): Promise<HttpFigures> {
  return withService(env, async (url, pid) => {
    const headers = { 'x-api-key': await tenant(url, 'bench') };
    await hammer(`${url}/events`, headers, single, 2);
    return hammer(`${url}/events`, headers, single, undefined, pid);
  });
}

/** B's appends at a fixed rate (open loop, one keep-alive connection each in flight): every latency in ms. */
async function steadyAppends(url: string, key: string, seconds: number): Promise<{ latencies: number[]; failed: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const latencies: number[] = [];
  let failed = 0;
  const one = (i: number) =>
    new Promise<void>((resolve) => {
      const started = performance.now();
      const req = http.request(
        `${url}/events`,
        { method: 'POST', agent, headers: { 'x-api-key': key, 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 201) latencies.push(performance.now() - started);
            else failed++;
            resolve();
          });
        },
      );
      req.on('error', () => {
        failed++;
        resolve();
      });
      req.end(JSON.stringify({ aggregateId: `b-${i % 100}`, eventType: 'Deposited', data: { i } }));
    });
  const pending: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; i < seconds * B_RATE; i++) {
    const due = start + (i * 1000) / B_RATE;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push(one(i));
  }
  await Promise.all(pending);
  agent.destroy();
  return { latencies, failed };
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

interface NeighbourFigures {
  alone: { p50: number; p95: number; p99: number; failed: number };
  noisy: { p50: number; p95: number; p99: number; failed: number };
  a: { ok: number; refused: number; other: number; perSecond: number };
  serverCpuPct: number;
}

/**
 * B alone and B beside A, alternating in short phases (alone, beside, alone, beside…) so that the
 * shared machine's drift hits both alike; B's latencies pooled per condition.
 */
async function noisyNeighbour(env: Record<string, string>): Promise<NeighbourFigures> {
  const phases = 4;
  const phaseS = DURATION_S;
  return withService(
    env,
    async (url, pid) => {
      const keyA = await tenant(url, 'noisy-a');
      const keyB = await tenant(url, 'steady-b');
      await hammer(`${url}/events`, { 'x-api-key': keyA }, single, 2); // warm-up
      const alone: number[] = [];
      const beside: number[] = [];
      let failedAlone = 0;
      let failedBeside = 0;
      let ok = 0;
      let refused = 0;
      let other = 0;
      let cpuMs = 0;
      for (let p = 0; p < phases; p++) {
        const quiet = await steadyAppends(url, keyB, phaseS);
        alone.push(...quiet.latencies);
        failedAlone += quiet.failed;
        const cpuBefore = cpuMsOf(pid);
        let i = 0;
        const [noisy, a] = await Promise.all([
          steadyAppends(url, keyB, phaseS),
          autocannon({
            url: `${url}/events`,
            method: 'POST',
            connections: 32,
            duration: phaseS,
            headers: { 'content-type': 'application/json', 'x-api-key': keyA },
            requests: [{ setupRequest: (req: any) => ({ ...req, body: JSON.stringify(single(i++)) }) }],
          } as autocannon.Options),
        ]);
        cpuMs += cpuMsOf(pid) - cpuBefore;
        beside.push(...noisy.latencies);
        failedBeside += noisy.failed;
        const codes = a.statusCodeStats as unknown as Record<string, { count: number }>;
        ok += codes['201']?.count ?? 0;
        refused += codes['429']?.count ?? 0;
        other += a.requests.total - (codes['201']?.count ?? 0) - (codes['429']?.count ?? 0);
      }
      return {
        alone: { p50: percentile(alone, 50), p95: percentile(alone, 95), p99: percentile(alone, 99), failed: failedAlone },
        noisy: { p50: percentile(beside, 50), p95: percentile(beside, 95), p99: percentile(beside, 99), failed: failedBeside },
        a: { ok, refused, other, perSecond: ok / (phases * phaseS) },
        serverCpuPct: (cpuMs / (phases * phaseS * 1000)) * 100,
      };
    },
    NEIGHBOUR_DIR,
  );
}

/**
 * Server CPU per append (this process, all threads) for each configuration, measured in batches that
 * take turns, `rounds` times: the median per configuration.
 */
async function pairedCpu(configs: [string, Record<string, string>][], rounds: number, batch: number): Promise<Map<string, number[]>> {
  const services: { name: string; svc: Awaited<ReturnType<typeof startService>>; key: string }[] = [];
  for (const [name, env] of configs) {
    const svc = await startService({ ...env, LOG_LEVEL: 'error' });
    const res = await svc.app.inject({
      method: 'POST',
      url: '/admin/tenants',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { name: 'bench' },
    });
    services.push({ name, svc, key: (JSON.parse(res.body) as { apiKey: string }).apiKey });
  }
  const perAppend = new Map<string, number[]>(configs.map(([name]) => [name, []]));
  let n = 0;
  const appendBatch = async (s: (typeof services)[number]) => {
    for (let i = 0; i < batch; i += 32) {
      await Promise.all(
        Array.from({ length: 32 }, () =>
          s.svc.app.inject({
            method: 'POST',
            url: '/events',
            headers: { 'x-api-key': s.key, 'content-type': 'application/json' },
            payload: JSON.stringify(single(n++)),
          }),
        ),
      );
    }
  };
  try {
    for (const s of services) await appendBatch(s); // warm-up
    for (let r = 0; r < rounds; r++) {
      for (const s of r % 2 === 0 ? services : [...services].reverse()) {
        const before = process.cpuUsage();
        await appendBatch(s);
        const used = process.cpuUsage(before);
        perAppend.get(s.name)!.push((used.user + used.system) / batch);
      }
    }
  } finally {
    for (const s of services) await s.svc.close();
  }
  return perAppend;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** µs per append's checks (request + its one event) through TenantQuotas, limits cached, never refusing. */
async function checkCost(rates: RateLimiter, calls: number): Promise<number> {
  const limits: TenantLimits = {
    appendRequests: { quota: 1_000_000_000, windowSeconds: 10 },
    appendEvents: { quota: 1_000_000_000, windowSeconds: 10 },
    uploads: { quota: 0, windowSeconds: 1 },
    streams: 0,
    webhooksInFlight: 0,
    storedEvents: 0,
    projections: 0,
    keysPerProjection: 0,
    pendingDeliveries: 0,
    eventWebhooks: 0,
  };
  const catalog = new TenantLimitsCatalog(
    { getTenant: async () => null, getLimits: async () => null, putLimits: async () => false },
    limits,
    60_000,
  );
  const quotas = new TenantQuotas(
    catalog,
    rates,
    new InProcessConcurrencyLimiter(),
    new StoredEventsGauge({ headPosition: async () => 0 }),
  );
  for (let i = 0; i < 10_000; i++) await quotas.admitAppendEvents(`t${i % 100}`, 1); // warm-up
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) {
    await quotas.admitAppendRequest(`t${i % 100}`);
    await quotas.admitAppendEvents(`t${i % 100}`, 1);
  }
  return Number(process.hrtime.bigint() - started) / 1000 / calls;
}

async function main(): Promise<void> {
  console.log(
    `# quota benchmark — ${new Date().toISOString()}, ${os.cpus().length} cores, node ${process.version}, ${DURATION_S} s per figure\n`,
  );
  const redis = await ThrowawayRedis.start();
  try {
    const quotaRedis = await connectQuotaRedis(redis.url);
    const redisRates = new RedisRateLimiter(quotaRedis.redis, { circuit: quotaRedis.circuit });
    console.log("## 0. an append's quota checks (request + 1 event), in process, 100 tenants\n");
    console.log(`- in-process buckets: ${fmt(await checkCost(new InProcessRateLimiter(), 500_000), 2)} µs`);
    console.log(
      `- Redis buckets, spent from local leases: ${fmt(await checkCost(redisRates, 200_000), 2)} µs (${redisRates.roundTrips} Redis round trips in all)\n`,
    );
    await quotaRedis.redis.quit();
    if (process.env.BENCH_ONLY === 'neighbour') return await neighbours(redis);
    const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
    const configs: [string, Record<string, string>][] = [
      ['quotas off', { ...NO_QUOTAS }],
      ['in-process buckets', { ...HIGH }],
      ['Redis buckets (leases)', { ...HIGH, REDIS_URL: redis.url }],
    ];
    const runs = new Map<string, HttpFigures[]>(configs.map(([name]) => [name, []]));
    for (let r = 0; r < rounds; r++) {
      for (const [name, env] of r % 2 === 0 ? configs : [...configs].reverse()) runs.get(name)!.push(await appendRate(env));
    }
    const paired = await pairedCpu(configs, Number(process.env.BENCH_PAIRED_ROUNDS ?? 20), 1024);
    if (process.env.BENCH_ONLY === 'paired') {
      for (const [name, xs] of paired) console.log(`- ${name}: ${fmt(median(xs), 1)} µs per append (${xs.map((x) => fmt(x)).join(' ')})`);
      return;
    }
    console.log(`## 1. one tenant's POST /events\n`);
    console.log(
      `Server CPU per append, the three configurations in one process taking turns (${paired.get('quotas off')!.length} batches of 1,024 each, 32 at a time, median):\n`,
    );
    for (const [name, xs] of paired)
      console.log(`- ${name}: ${fmt(median(xs), 1)} µs (${fmt(median(xs) - median(paired.get('quotas off')!), 1)} µs against quotas off)`);
    console.log(`\nOver HTTP, each its own server process, 32 connections, ${rounds} alternating rounds:\n`);
    console.log('| quotas | appends/s | server CPU per append (µs) | p99 ms | failed |');
    console.log('|---|---|---|---|---:|');
    for (const [name, figures] of runs) {
      console.log(
        `| ${name} | ${figures.map((f) => fmt(f.reqPerSec)).join(' / ')} | ${figures.map((f) => fmt(f.serverCpuUs ?? 0, 1)).join(' / ')} | ${figures.map((f) => fmt(f.p99, 1)).join(' / ')} | ${figures.reduce((n, f) => n + f.non2xx + f.errors, 0)} |`,
      );
    }

    await neighbours(redis);
  } finally {
    await redis.stop();
  }
}

async function neighbours(redis: ThrowawayRedis): Promise<void> {
  {
    console.log(
      `\n## 2. noisy neighbour: B appends ${B_RATE}/s; A appends as fast as 32 connections go; phases of B alone and B beside A alternate\n`,
    );
    console.log(
      '| quotas | B alone p50 / p95 / p99 ms | B beside A p50 / p95 / p99 ms | B p99 ratio | A admitted/s | A refused (429) | server CPU % |',
    );
    console.log('|---|---|---|---:|---:|---:|---:|');
    for (const [name, env] of [
      [`on (${A_QUOTA}), in-process`, { QUOTA_APPEND_REQUESTS: A_QUOTA }],
      [`on (${A_QUOTA}), in-process, refusals at once`, { QUOTA_APPEND_REQUESTS: A_QUOTA, QUOTA_REFUSAL_DELAY_MS: '0' }],
      [`on (${A_QUOTA}), Redis`, { QUOTA_APPEND_REQUESTS: A_QUOTA, REDIS_URL: redis.url }],
      ['off', { ...NO_QUOTAS }],
    ] as const) {
      if (process.env.BENCH_NEIGHBOURS && !name.includes(process.env.BENCH_NEIGHBOURS)) continue;
      const f = await noisyNeighbour(env);
      console.log(
        `| ${name} | ${fmt(f.alone.p50, 1)} / ${fmt(f.alone.p95, 1)} / ${fmt(f.alone.p99, 1)} | ${fmt(f.noisy.p50, 1)} / ${fmt(f.noisy.p95, 1)} / ${fmt(f.noisy.p99, 1)} | ${fmt(f.noisy.p99 / f.alone.p99, 2)}× | ${fmt(f.a.perSecond)} | ${fmt(f.a.refused)} | ${fmt(f.serverCpuPct)} |`,
      );
      if (f.alone.failed + f.noisy.failed + f.a.other > 0)
        console.log(`  (failures: B alone ${f.alone.failed}, B beside A ${f.noisy.failed}, A other than 201/429 ${f.a.other})`);
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
