import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import autocannon from 'autocannon';
import { ThrowawayPostgres } from '../test/support/throwaway-postgres';
import {
  BENCH_ADMIN_TOKEN,
  Checkout,
  adminPost,
  call,
  checkoutsUnderTest,
  cpuMsOf,
  fmt,
  median,
  pct,
  startChild,
  stopChild,
} from './bench-util';

/**
 * Issue 25 item 5: one tenant's flood must not slow another's appends. Tenant A floods
 * `POST /events/batch` with 100-event batches (8 connections, autocannon); tenant B sends single
 * `POST /events` one at a time, 20 ms apart (~50/s). Per round: B alone for BENCH_SECONDS, then B
 * while A floods for BENCH_SECONDS; B's p50/p99 and completions, A's events/s and the service's CPU.
 * Target: B's p50 and p99 while A floods within 1.5× of B alone.
 *
 *   BENCH_SECONDS (default 10), BENCH_ROUNDS (default 2), BENCH_POSTGRES=1 (PostgreSQL too),
 * BENCH_SQLITE=0: PostgreSQL only.
 *   BENCH_SERVICE_DIR (a built baseline checkout, measured first in the same run).
 * Quotas are off (A's ~12,000 events/s is under the default 20,000/s anyway), except the ones
 * this change adds, which keep their defaults.
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const A_CONNECTIONS = 8;
const BATCH = 100;
const PACE_MS = 20;

interface BFigures {
  p50: number;
  p99: number;
  done: number;
  failed: number;
}

/** B: one append at a time, PACE_MS after each answer, for `seconds`. */
async function paced(url: string, key: string, seconds: number): Promise<BFigures> {
  const latencies: number[] = [];
  let failed = 0;
  const end = Date.now() + seconds * 1000;
  for (let i = 0; Date.now() < end; i++) {
    const t0 = process.hrtime.bigint();
    const r = await call(`${url}/events`, 'POST', key, { aggregateId: `b-${i % 50}`, eventType: 'Deposited', data: { amount: 1 } });
    latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (r.status !== 201) failed++;
    await new Promise((res) => setTimeout(res, PACE_MS));
  }
  return { p50: pct(latencies, 50), p99: pct(latencies, 99), done: latencies.length, failed };
}

/** A: 100-event batches from 8 connections for `seconds`. */
async function flood(url: string, key: string, seconds: number): Promise<{ eventsPerSec: number; non2xx: number }> {
  let i = 0;
  const events = Array.from({ length: BATCH }, (_, k) => ({ eventType: 'Deposited', data: { amount: k } }));
  const result = await autocannon({
    url: `${url}/events/batch`,
    method: 'POST',
    connections: A_CONNECTIONS,
    duration: seconds,
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    requests: [
      {
        setupRequest: (req: any) => {
          req.body = JSON.stringify({ aggregateId: `a-${i++ % 500}`, events });
          return req;
        },
      },
    ],
  } as autocannon.Options);
  return { eventsPerSec: (result['2xx'] * BATCH) / seconds, non2xx: result.non2xx + result.errors };
}

interface Round {
  alone: BFigures;
  flooded: BFigures;
  aEventsPerSec: number;
  aRefused: number;
  cpuUsPerEvent: number;
}

async function rounds(checkout: Checkout, env: Record<string, string>): Promise<Round[]> {
  const { url, child } = await startChild(path.join(checkout.dir, 'dist/src/main.js'), { ADMIN_TOKEN: BENCH_ADMIN_TOKEN, ...env });
  try {
    const a = (await adminPost(url, '/admin/tenants', { name: 'flooder' })).apiKey as string;
    const b = (await adminPost(url, '/admin/tenants', { name: 'neighbour' })).apiKey as string;
    await flood(url, a, 2);
    await paced(url, b, 1);
    const out: Round[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const alone = await paced(url, b, SECONDS);
      const cpu0 = cpuMsOf(child.pid!);
      const [flooded, fl] = await Promise.all([paced(url, b, SECONDS), flood(url, a, SECONDS)]);
      const cpuUsPerEvent = ((cpuMsOf(child.pid!) - cpu0) * 1000) / Math.max(1, fl.eventsPerSec * SECONDS + flooded.done);
      out.push({ alone, flooded, aEventsPerSec: fl.eventsPerSec, aRefused: fl.non2xx, cpuUsPerEvent });
    }
    return out;
  } finally {
    await stopChild(child);
  }
}

const ms = (n: number) => fmt(n, 1);

function report(store: string, label: string, rs: Round[]): void {
  rs.forEach((r, i) =>
    console.log(
      `| ${store} | ${label} | ${i + 1} | ${ms(r.alone.p50)} / ${ms(r.alone.p99)} (${r.alone.done}) | ` +
        `${ms(r.flooded.p50)} / ${ms(r.flooded.p99)} (${r.flooded.done}${r.flooded.failed ? `, ${r.flooded.failed} failed` : ''}) | ` +
        `${fmt(r.flooded.p50 / r.alone.p50, 2)}× / ${fmt(r.flooded.p99 / r.alone.p99, 2)}× | ${fmt(r.aEventsPerSec)}${r.aRefused ? ` (${r.aRefused} refused)` : ''} | ${fmt(r.cpuUsPerEvent, 1)} |`,
    ),
  );
}

async function main(): Promise<void> {
  console.log(
    `# noisy-neighbour benchmark — ${new Date().toISOString()}, ${os.cpus().length} cores, node ${process.version}, ` +
      `${ROUNDS} rounds of ${SECONDS} s, A: ${A_CONNECTIONS} connections × ${BATCH}-event batches, B: one append at a time, ${PACE_MS} ms apart\n`,
  );
  console.log(
    '| store | service | round | B alone p50 / p99 ms (appends) | B while A floods p50 / p99 ms (appends) | flooded / alone p50 / p99 | A events/s | service CPU µs/event |',
  );
  console.log('|---|---|---:|---:|---:|---:|---:|---:|');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-noisy-'));
  const summary: string[] = [];
  const run = async (store: string, env: () => Promise<Record<string, string>>) => {
    for (const c of checkoutsUnderTest()) {
      const rs = await rounds(c, await env());
      report(store, c.label, rs);
      summary.push(
        `${store} ${c.label}: B flooded/alone median p50 ${fmt(median(rs.map((r) => r.flooded.p50 / r.alone.p50)), 2)}×, ` +
          `p99 ${fmt(median(rs.map((r) => r.flooded.p99 / r.alone.p99)), 2)}× (target ≤ 1.5×); ` +
          `B appends flooded/alone ${fmt(median(rs.map((r) => r.flooded.done / r.alone.done)), 2)}×; A ${fmt(median(rs.map((r) => r.aEventsPerSec)))} events/s`,
      );
    }
  };
  try {
    let n = 0;
    if (process.env.BENCH_SQLITE !== '0')
      await run('sqlite', async () => {
        const d = path.join(dir, `s${n++}`);
        fs.mkdirSync(d);
        return { DATA_DIR: d };
      });
    if (process.env.BENCH_POSTGRES === '1') {
      const pg = await ThrowawayPostgres.start();
      try {
        await run('postgres', async () => {
          const d = path.join(dir, `p${n++}`);
          fs.mkdirSync(d);
          return { DATA_DIR: d, DATABASE_URL: await pg.createDatabase(`bench_noisy_${n}`) };
        });
      } finally {
        await pg.stop();
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\n${summary.join('\n')}`);
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
