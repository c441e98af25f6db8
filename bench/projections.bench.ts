import { execSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { exampleSources } from '../test/support/runtime-harness';
import { ThrowawayRedis } from '../test/support/throwaway-redis';
import { zipSources } from '../test/support/zip-writer';
import { call, Checkout, checkoutsUnderTest, cpuMsOf, fmt, pct, startChild, stopChild } from './bench-util';

/*
 * Projections: catch-up over PROJ_KEYS × PROJ_PER_KEY events, then append acknowledged → state
 * readable at LIVE_RATE appends/s (default 1,000) for LIVE_SECONDS, LIVE_RUNS times per service, with the
 * service's CPU per append (process incl. its threads; not the executors). PROJ_MODES: which lane
 * modes (in-process,bullmq). BENCH_SERVICE_DIR: another built checkout measured in the same run, first.
 *   PROJ_KEYS=2000 PROJ_PER_KEY=10 PROJ_MODES=bullmq LIVE_RUNS=3 BENCH_SERVICE_DIR=/work/base npm run bench:projections
 */
const MODES = (process.env.PROJ_MODES ?? 'in-process,bullmq').split(',');
const LIVE_RATE = Number(process.env.LIVE_RATE ?? 1000);
const LIVE_SECONDS = Number(process.env.LIVE_SECONDS ?? 10);
const LIVE_RUNS = Number(process.env.LIVE_RUNS ?? 1);

const ADMIN = 'bench-admin-token-0123456789';
const KEYS = Number(process.env.PROJ_KEYS ?? 10_000);
const PER_KEY = Number(process.env.PROJ_PER_KEY ?? 100);

async function tenant(url: string): Promise<string> {
  const r = await fetch(`${url}/admin/tenants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: '{"name":"bench"}',
  });
  return ((await r.json()) as { apiKey: string }).apiKey;
}

/** KEYS orders (one customer each): an OrderPlaced and PER_KEY−1 ItemAdded, as batches of 100. */
async function loadHistory(url: string, key: string): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let k = next++; k < KEYS; k = next++) {
        const events = [{ eventType: 'OrderPlaced', data: { customerId: `c-${k}`, lines: [{ sku: 'a', qty: 1, price: 1 }] } }];
        for (let i = 1; i < PER_KEY; i++)
          events.push({ eventType: 'ItemAdded', data: { sku: 'b', qty: 1, price: 1, customerId: `c-${k}` } as any });
        for (let i = 0; i < events.length; i += 100) {
          const r = await call(`${url}/events/batch`, 'POST', key, {
            aggregateId: `order-${k}`,
            aggregateType: 'order',
            events: events.slice(i, i + 100),
          });
          if (r.status !== 201) throw new Error(JSON.stringify(r.body));
        }
      }
    }),
  );
}

async function deploy(url: string, key: string): Promise<{ projectionId: string; seconds: number }> {
  const t0 = performance.now();
  const form = new FormData();
  form.append('file', new Blob([zipSources(exampleSources('customer-totals'))]), 'p.zip');
  const up = (await (
    await fetch(`${url}/projections/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form })
  ).json()) as any;
  let projectionId: string;
  for (;;) {
    const st = await call(`${url}/projections/${up.uploadId}/status?include=lag`, 'GET', key);
    projectionId = st.body.projectionId ?? '';
    const lag = st.body.activeVersion?.applyLag;
    if (projectionId && lag && lag.lagEvents === 0) {
      const probe = await call(`${url}/projections/${projectionId}/state/c-${KEYS - 1}`, 'GET', key);
      if (probe.status === 200) break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { projectionId, seconds: (performance.now() - t0) / 1000 };
}

/** Appends at `rate`/s for `seconds`; for each, the time from its acknowledgement until a read with minPosition sees it. */
async function liveLatency(url: string, key: string, projectionId: string, rate: number, seconds: number): Promise<number[]> {
  const lat: number[] = [];
  const inflight: Promise<void>[] = [];
  const total = rate * seconds;
  const start = performance.now();
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inflight.push(
      (async () => {
        const c = `c-${i % KEYS}`;
        const r = await call(`${url}/events`, 'POST', key, {
          aggregateId: `order-live-${i}`,
          eventType: 'OrderPlaced',
          data: { customerId: c, lines: [{ sku: 'x', qty: 1, price: 1 }] },
        });
        const acked = performance.now();
        const s = await call(`${url}/projections/${projectionId}/state/${c}?minPosition=${r.body.position}`, 'GET', key);
        if (s.status === 200) lat.push(performance.now() - acked);
      })(),
    );
  }
  await Promise.all(inflight);
  return lat;
}

function rssMb(pid: number): number {
  return Number(execSync(`ps -o rss= -p ${pid}`).toString().trim()) / 1024;
}

async function run(c: Checkout, mode: string, env: Record<string, string>, redis?: ThrowawayRedis): Promise<void> {
  const label = `${c.label} ${mode}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-proj-'));
  const { url, child } = await startChild(path.join(c.dir, 'dist', 'src', 'main.js'), { ADMIN_TOKEN: ADMIN, DATA_DIR: dataDir, ...env });
  try {
    const key = await tenant(url);
    const t0 = performance.now();
    await loadHistory(url, key);
    console.log(`[${label}] loaded ${fmt(KEYS * PER_KEY)} events for ${fmt(KEYS)} keys in ${fmt((performance.now() - t0) / 1000, 1)} s`);
    const d = await deploy(url, key);
    console.log(
      `[${label}] catch-up (compile included): ${fmt(d.seconds, 1)} s = ${fmt((KEYS * PER_KEY) / d.seconds)} events/s, ${fmt(KEYS / d.seconds)} keys/s`,
    );
    await liveLatency(url, key, d.projectionId, 200, 2); // warm
    for (let r = 1; r <= LIVE_RUNS; r++) {
      const cpu0 = cpuMsOf(child.pid!);
      const lat = await liveLatency(url, key, d.projectionId, LIVE_RATE, LIVE_SECONDS);
      const cpuUs = ((cpuMsOf(child.pid!) - cpu0) * 1000) / (LIVE_RATE * LIVE_SECONDS);
      console.log(
        `[${label}] live run ${r}, ${fmt(LIVE_RATE)} appends/s for ${LIVE_SECONDS} s: append acknowledged → state readable p50 ${fmt(pct(lat, 50), 1)} ms, p99 ${fmt(pct(lat, 99), 1)} ms (${fmt(lat.length)} samples); service CPU ${fmt(cpuUs, 0)} µs per append + read`,
      );
    }
    console.log(
      `[${label}] service RSS with ${fmt(KEYS)} keys: ${fmt(rssMb(child.pid!))} MiB${redis ? `; Redis clients: ${await redis.clientCount()}` : ''}`,
    );
  } finally {
    await stopChild(child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(
    `# projections benchmark — ${new Date().toISOString()}, ${os.cpus().length} cores, node ${process.version}, SQLite store, customer-totals example\n`,
  );
  for (const c of checkoutsUnderTest()) {
    if (MODES.includes('in-process')) await run(c, 'in-process', {});
    if (!MODES.includes('bullmq')) continue;
    const redis = await ThrowawayRedis.start();
    try {
      await run(c, 'bullmq', { REDIS_URL: redis.url }, redis);
    } finally {
      await redis.stop();
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
