/**
 * Issue 15 (items 3 and 4): what the notification log and the webhook backlog cost.
 *
 *  1. Store size: 200 projections of one tenant × 4,100 events (customer totals over 40
 *     customers: each state holds the customer's orders, so it grows), written through the lanes'
 *     own store call (`lanes.applied`, which logs the notifications), then the bytes of the
 *     notification tables and indexes (SQLite dbstat).
 *  2. A webhook backlog: 200,000 pending deliveries (200 keys × 1,000) behind a receiver that
 *     always answers 500; the service (a child process on that data directory) idles with it:
 *     its CPU over BENCH_IDLE_S seconds and GET /health p50/p99 (sequential requests).
 *
 * Each part runs this checkout and, with BENCH_SERVICE_DIR (another built checkout, e.g. the base
 * /work/wt/i12), that one too, alternating, BENCH_RUNS times each (default 3).
 *
 *   npm run bench:notification-bounds
 *   BENCH_SERVICE_DIR=/work/wt/i12 BENCH_RUNS=3 node dist/bench/notification-bounds.bench.js
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { BENCH_ADMIN_TOKEN, Checkout, checkoutsUnderTest, cpuMsOf, fmt, median, pct, startChild, stopChild } from './bench-util';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const PROJECTIONS = Number(process.env.BENCH_PROJECTIONS ?? 200);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 4_100);
const CUSTOMERS = 40;
const BACKLOG_KEYS = 200;
const BACKLOG_PER_KEY = Number(process.env.BENCH_BACKLOG_PER_KEY ?? 1_000);
const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 20);

const checkouts = checkoutsUnderTest();

async function openStore(c: Checkout, dataDir: string): Promise<any> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the store of the checkout under test, resolved at run time
  const { SqliteStore } = require(path.join(c.dir, 'dist', 'src', 'store', 'sqlite', 'sqlite-store.js'));
  const store = new SqliteStore({ file: path.join(dataDir, 'events.sqlite') });
  await store.migrate();
  return store;
}

async function deploy(store: any, tenantId: string, projectionId: string, notifyConfig: string | null) {
  const version = { versionId: `v-${projectionId}`, projectionId, tenantId, className: 'C', targetPosition: 0, createdAt: 1 };
  await store.projections.deploy({ tenantId, projectionId, name: projectionId, version, notifyConfig });
}

/** The customer-totals state after each event, as the .NET host writes it (compact JSON). */
function customerStates(): { key: string; state: string }[] {
  const totals = new Map<string, { count: number; amount: number; orders: string[] }>();
  return Array.from({ length: EVENTS }, (_, i) => {
    const key = `cust-${i % CUSTOMERS}`;
    const t = totals.get(key) ?? { count: 0, amount: 0, orders: [] };
    totals.set(key, t);
    const price = (i % 7) + 1;
    t.count++;
    t.amount += price;
    t.orders.push(`"order-${i}":${price}`);
    return { key, state: `{"customerId":"${key}","orderCount":${t.count},"totalAmount":${t.amount},"orders":{${t.orders.join(',')}}}` };
  });
}

async function storeSize(c: Checkout): Promise<{ mb: number; seconds: number }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-nb-size-'));
  const store = await openStore(c, dataDir);
  const started = Date.now();
  try {
    await store.tenants.createTenant({ tenantId: 't', name: 't', createdAt: 1 });
    const states = customerStates();
    for (let p = 0; p < PROJECTIONS; p++) {
      const projectionId = `p${p}`;
      await deploy(store, 't', projectionId, null);
      const byKey = new Map<string, { position: number; state: string }[]>();
      states.forEach((s, i) => byKey.set(s.key, [...(byKey.get(s.key) ?? []), { position: i + 1, state: s.state }]));
      // One lane run per key per 100 events, all keys in parallel (as the lanes would).
      await Promise.all(
        [...byKey].map(async ([key, changes]) => {
          await store.lanes.runs.laneWork({ tenantId: 't', versionId: `v-${projectionId}`, key }, 1);
          for (let from = 0; from < changes.length; from += 100) {
            const run = changes.slice(from, from + 100);
            const last = run[run.length - 1];
            const ok = await store.lanes.runs.applied(
              { tenantId: 't', versionId: `v-${projectionId}`, key },
              {
                state: last.state,
                fromPosition: from === 0 ? 0 : changes[from - 1].position,
                appliedPosition: last.position,
                updatedAt: 1,
                notify: {
                  projectionId,
                  changes: run.map((r) => ({
                    position: r.position,
                    aggregateId: `order-${r.position - 1}`,
                    aggregateType: 'order',
                    version: 1,
                    timestamp: 1,
                    state: r.state,
                  })),
                },
              },
            );
            if (!ok) throw new Error('lane guard missed');
          }
        }),
      );
    }
    const seconds = (Date.now() - started) / 1000;
    await store.close();
    const db = new Database(path.join(dataDir, 'events.sqlite'), { readonly: true });
    const { b } = db
      .prepare("SELECT SUM(pgsize) AS b FROM dbstat WHERE name LIKE 'notification%' OR name LIKE 'sqlite_autoindex_notification%'")
      .get() as { b: number };
    db.close();
    return { mb: b / 1e6, seconds };
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function backlogIdle(c: Checkout, receiverUrl: string): Promise<{ cpuPct: number; p50: number; p99: number }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-nb-backlog-'));
  const store = await openStore(c, dataDir);
  try {
    await store.tenants.createTenant({ tenantId: 't', name: 't', createdAt: 1 });
    await deploy(store, 't', 'p', JSON.stringify({ webhookUrl: receiverUrl, isolated: false, sse: false }));
    await Promise.all(
      Array.from({ length: BACKLOG_KEYS }, async (_, k) => {
        const key = `k${k}`;
        await store.lanes.runs.laneWork({ tenantId: 't', versionId: 'v-p', key }, 1);
        for (let from = 0; from < BACKLOG_PER_KEY; from += 500) {
          const n = Math.min(500, BACKLOG_PER_KEY - from);
          const changes = Array.from({ length: n }, (_, i) => {
            const position = k * BACKLOG_PER_KEY + from + i + 1;
            return { position, aggregateId: `a-${position}`, aggregateType: 'a', version: 1, timestamp: 1, state: `{"n":${position}}` };
          });
          const prev = from === 0 ? 0 : k * BACKLOG_PER_KEY + from;
          await store.lanes.runs.applied(
            { tenantId: 't', versionId: 'v-p', key },
            {
              state: '{}',
              fromPosition: prev,
              appliedPosition: changes[n - 1].position,
              updatedAt: 1,
              notify: { projectionId: 'p', changes },
            },
          );
        }
      }),
    );
    while ((await store.webhooks.enqueue('t', 'p', 5_000, Date.now())) > 0);
    await store.close();

    const { url, child } = await startChild(path.join(c.dir, 'dist', 'src', 'main.js'), {
      DATA_DIR: dataDir,
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    });
    try {
      await new Promise((r) => setTimeout(r, 5_000)); // start-up, first attempts of the heads
      const cpu0 = cpuMsOf(child.pid!);
      const t0 = Date.now();
      const lat: number[] = [];
      while (Date.now() - t0 < IDLE_S * 1000) {
        const s = performance.now();
        await fetch(`${url}/health`).then((r) => r.arrayBuffer());
        lat.push(performance.now() - s);
        await new Promise((r) => setTimeout(r, 20));
      }
      const cpuPct = ((cpuMsOf(child.pid!) - cpu0) / (Date.now() - t0)) * 100;
      return { cpuPct, p50: median(lat), p99: pct(lat, 99) };
    } finally {
      await stopChild(child);
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const spread = (xs: number[], d = 1) => `${fmt(median(xs), d)} (${fmt(Math.min(...xs), d)}–${fmt(Math.max(...xs), d)})`;

async function main() {
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(500).end('no'));
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const parts = (process.env.BENCH_PARTS ?? 'size,backlog').split(',');
  const sizes = new Map<string, number[]>(checkouts.map((c) => [c.label, []]));
  const idle = new Map<string, { cpuPct: number; p50: number; p99: number }[]>(checkouts.map((c) => [c.label, []]));
  for (let run = 1; run <= RUNS; run++) {
    for (const c of checkouts) {
      if (parts.includes('size')) {
        const s = await storeSize(c);
        sizes.get(c.label)!.push(s.mb);
        console.log(
          `run ${run} ${c.label}: ${PROJECTIONS} projections × ${EVENTS} events: notification log ${fmt(s.mb, 1)} MB (written in ${fmt(s.seconds, 0)} s)`,
        );
      }
      if (parts.includes('backlog')) {
        const r = await backlogIdle(c, receiverUrl);
        idle.get(c.label)!.push(r);
        console.log(
          `run ${run} ${c.label}: ${BACKLOG_KEYS * BACKLOG_PER_KEY} pending behind a failing receiver: CPU ${fmt(r.cpuPct, 1)} %, /health p50 ${fmt(r.p50, 2)} ms p99 ${fmt(r.p99, 2)} ms`,
        );
      }
    }
  }
  console.log('\nmedian (min–max) over runs');
  for (const c of checkouts) {
    if (parts.includes('size')) console.log(`${c.label}: notification log ${spread(sizes.get(c.label)!)} MB`);
    const i = idle.get(c.label)!;
    if (i.length)
      console.log(
        `${c.label}: idle CPU ${spread(i.map((x) => x.cpuPct))} %, /health p50 ${spread(
          i.map((x) => x.p50),
          2,
        )} ms, p99 ${spread(
          i.map((x) => x.p99),
          2,
        )} ms`,
      );
  }
  receiver.closeAllConnections();
  receiver.close();
}

void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
