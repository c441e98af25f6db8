/**
 * Issue 24 (item 2): event webhook deliveries per second, and append-ack → delivery latency.
 *
 *  1. Drain: BENCH_EVENTS events already in the log (batches of 1,000), then BENCH_SUBSCRIPTIONS
 *     event webhooks created with afterPosition 0 to a local receiver that answers 204 at once:
 *     deliveries/s over all of them (each delivers one event at a time, in order), and per one.
 *  2. Live: the same number of event webhooks at the head, BENCH_LIVE_RATE appends/s for
 *     BENCH_LIVE_S seconds: each append's 201 → its delivery, p50/p99 (the dispatcher is woken by
 *     the append on this instance; no poll involved).
 *  3. Sparse filters (issue 28): another tenant's BENCH_SPARSE_EVENTS events, one in 1,000 of type
 *     `Rare` with tag `rare:1`; one event webhook at a time from position 0 with each filter — the
 *     type list `eventTypes: ["Rare"]`, the query `{tags: ["rare:1"]}`, the query `{types: ["Rare"],
 *     tags: ["rare:1"]}` — until it delivered every match: wall time and the service's CPU per event
 *     passed over (on PostgreSQL the scans' work is the database server's: compare wall times).
 *     BENCH_ROUNDS rounds, the filters' order rotated each round.
 *
 * The service is this checkout's build as a child process, on SQLite (on a throwaway PostgreSQL with
 * BENCH_POSTGRES=1, or on DATABASE_URL when set),
 * quotas off (bench-util NO_QUOTAS).
 *
 *   npm run bench:event-webhooks
 *   BENCH_EVENTS=20000 BENCH_SUBSCRIPTIONS=4 BENCH_LIVE_RATE=200 BENCH_LIVE_S=20 node dist/bench/event-webhooks.bench.js
 *   BENCH_PARTS=sparse BENCH_SPARSE_EVENTS=100000 BENCH_ROUNDS=3 node dist/bench/event-webhooks.bench.js
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { ChildProcess } from 'node:child_process';
import { ThrowawayPostgres } from '../test/support/throwaway-postgres';
import { adminPost, BENCH_ADMIN_TOKEN, call, cpuMsOf, fmt, median, pct, startChild, stopChild } from './bench-util';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 5_000);
const SUBSCRIPTIONS = Number(process.env.BENCH_SUBSCRIPTIONS ?? 4);
const LIVE_RATE = Number(process.env.BENCH_LIVE_RATE ?? 100);
const LIVE_S = Number(process.env.BENCH_LIVE_S ?? 10);
const SPARSE_EVENTS = Number(process.env.BENCH_SPARSE_EVENTS ?? 50_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PARTS = new Set((process.env.BENCH_PARTS ?? 'drain,sparse').split(','));

/** Counts deliveries per subscription and remembers when each position first arrived. */
class Receiver {
  readonly counts = new Map<string, number>();
  readonly firstAt = new Map<number, number>();
  private server!: http.Server;
  url = '';

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const sub = String(req.headers['webhook-subscription-id']);
        const position = Number(req.headers['webhook-position']);
        this.counts.set(sub, (this.counts.get(sub) ?? 0) + 1);
        if (!this.firstAt.has(position)) this.firstAt.set(position, performance.now());
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  total(): number {
    return [...this.counts.values()].reduce((a, b) => a + b, 0);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

async function waitFor(what: string, ok: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-ewh-'));
  const pg = process.env.BENCH_POSTGRES === '1' ? await ThrowawayPostgres.start() : null;
  const databaseUrl = pg ? await pg.createDatabase('bench_event_webhooks') : process.env.DATABASE_URL;
  const { url, child } = await startChild('src/main.js', {
    DATA_DIR: dataDir,
    ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    QUOTA_EVENT_WEBHOOKS: '0',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  });
  const receiver = new Receiver();
  await receiver.start();
  try {
    const store = databaseUrl ? 'postgres' : 'sqlite';

    if (PARTS.has('drain')) {
      const { apiKey: key } = await adminPost(url, '/admin/tenants', { name: 'bench-event-webhooks' });
      // 1. Drain a backlog.
      for (let done = 0; done < EVENTS; done += 1_000) {
        const n = Math.min(1_000, EVENTS - done);
        const events = Array.from({ length: n }, (_, i) => ({ eventType: 'Moved', data: { i: done + i } }));
        const r = await call(`${url}/events/batch`, 'POST', key, { aggregateId: `acct-${done / 1_000}`, events });
        if (r.status !== 201) throw new Error(`batch: ${r.status} ${JSON.stringify(r.body)}`);
      }
      const started = performance.now();
      for (let s = 0; s < SUBSCRIPTIONS; s++) {
        const r = await call(`${url}/event-webhooks`, 'POST', key, { url: receiver.url, afterPosition: 0, name: `drain-${s}` });
        if (r.status !== 201) throw new Error(`create: ${r.status} ${JSON.stringify(r.body)}`);
      }
      await waitFor('backlog drained', () => receiver.total() >= EVENTS * SUBSCRIPTIONS, 600_000);
      const drainS = (performance.now() - started) / 1000;
      const perSecond = (EVENTS * SUBSCRIPTIONS) / drainS;
      for (const w of (await call(`${url}/event-webhooks`, 'GET', key)).body.eventWebhooks) {
        await call(`${url}/event-webhooks/${w.webhookId}`, 'DELETE', key);
      }

      // 2. Live: subscriptions at the head, appends at a steady rate.
      const live = new Receiver();
      await live.start();
      try {
        for (let s = 0; s < SUBSCRIPTIONS; s++) await call(`${url}/event-webhooks`, 'POST', key, { url: live.url, name: `live-${s}` });
        const acked = new Map<number, number>();
        const total = LIVE_RATE * LIVE_S;
        const t0 = performance.now();
        const inFlight: Promise<void>[] = [];
        for (let i = 0; i < total; i++) {
          const due = t0 + (i * 1000) / LIVE_RATE;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          inFlight.push(
            call(`${url}/events`, 'POST', key, { aggregateId: `live-${i % 50}`, eventType: 'Moved', data: { i } }).then((r) => {
              if (r.status === 201) acked.set(r.body.position, performance.now());
            }),
          );
        }
        await Promise.all(inFlight);
        await waitFor('live deliveries', () => live.total() >= acked.size * SUBSCRIPTIONS, 120_000);
        const latencies = [...acked].map(([p, at]) => (live.firstAt.get(p) ?? NaN) - at).filter((x) => !Number.isNaN(x));
        const row = {
          store,
          events: EVENTS,
          subscriptions: SUBSCRIPTIONS,
          drainSeconds: +drainS.toFixed(2),
          deliveriesPerSecond: Math.round(perSecond),
          perSubscriptionPerSecond: Math.round(perSecond / SUBSCRIPTIONS),
          liveRate: LIVE_RATE,
          liveAppends: acked.size,
          // The first subscription's delivery of each event; negative (delivery before the 201 was read) counts as 0.
          ackToDeliveryP50Ms: +Math.max(0, pct(latencies, 50)).toFixed(1),
          ackToDeliveryP99Ms: +Math.max(0, pct(latencies, 99)).toFixed(1),
        };
        console.log(
          `event webhooks (${store}): ${fmt(row.deliveriesPerSecond)} deliveries/s draining ${fmt(EVENTS)} events × ${SUBSCRIPTIONS} subscriptions ` +
            `(${fmt(row.perSubscriptionPerSecond)}/s each); live at ${LIVE_RATE} appends/s: ack → delivery p50 ${row.ackToDeliveryP50Ms} ms, p99 ${row.ackToDeliveryP99Ms} ms`,
        );
        console.log(JSON.stringify(row));
      } finally {
        await live.stop();
      }
    }
    if (PARTS.has('sparse')) await sparseFilters(url, child, receiver, store);
  } finally {
    await receiver.stop();
    await stopChild(child);
    await pg?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Part 3: what a filter costs per event it passes over, by kind of filter (see the header). */
async function sparseFilters(url: string, child: ChildProcess, receiver: Receiver, store: string): Promise<void> {
  const { apiKey: key } = await adminPost(url, '/admin/tenants', { name: 'bench-sparse-filters' });
  for (let done = 0; done < SPARSE_EVENTS; done += 1_000) {
    const n = Math.min(1_000, SPARSE_EVENTS - done);
    const events = Array.from({ length: n }, (_, i) =>
      i === n - 1 ? { eventType: 'Rare', data: { i: done + i }, tags: ['rare:1'] } : { eventType: 'Moved', data: { i: done + i } },
    );
    const r = await call(`${url}/events/batch`, 'POST', key, { aggregateId: `sparse-${done / 1_000}`, events });
    if (r.status !== 201) throw new Error(`batch: ${r.status} ${JSON.stringify(r.body)}`);
  }
  const matches = Math.ceil(SPARSE_EVENTS / 1_000);
  const filters: Record<string, Record<string, unknown>> = {
    'eventTypes list': { eventTypes: ['Rare'] },
    'query, tag': { query: { items: [{ tags: ['rare:1'] }] } },
    'query, type and tag': { query: { items: [{ types: ['Rare'], tags: ['rare:1'] }] } },
  };
  const names = Object.keys(filters);
  const runs = new Map<string, { wallMs: number; cpuMs: number }[]>(names.map((n) => [n, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of [...names.slice(round % names.length), ...names.slice(0, round % names.length)]) {
      const cpu0 = cpuMsOf(child.pid!);
      const t0 = performance.now();
      const r = await call(`${url}/event-webhooks`, 'POST', key, {
        url: receiver.url,
        afterPosition: 0,
        name: `sparse-${round}`,
        ...filters[name],
      });
      if (r.status !== 201) throw new Error(`create: ${r.status} ${JSON.stringify(r.body)}`);
      const id = r.body.webhookId;
      await waitFor(`${name}: every match delivered`, () => (receiver.counts.get(id) ?? 0) >= matches, 600_000);
      // Delivered the last match; the cursor still passes the rest of the log (nothing after the last match here).
      runs.get(name)!.push({ wallMs: performance.now() - t0, cpuMs: cpuMsOf(child.pid!) - cpu0 });
      if (receiver.counts.get(id) !== matches) throw new Error(`${name}: ${receiver.counts.get(id)} deliveries, ${matches} expected`);
      await call(`${url}/event-webhooks/${id}`, 'DELETE', key);
    }
  }
  const perEventUs = (ms: number) => +((ms * 1000) / SPARSE_EVENTS).toFixed(2);
  const base = median(runs.get(names[0])!.map((x) => x.wallMs));
  for (const name of names) {
    const xs = runs.get(name)!;
    const row = {
      store,
      filter: name,
      events: SPARSE_EVENTS,
      matches,
      wallMs: xs.map((x) => Math.round(x.wallMs)),
      cpuUsPerEventPassed: xs.map((x) => perEventUs(x.cpuMs)),
      wallPerEventUs: xs.map((x) => perEventUs(x.wallMs)),
      wallVsTypeList: +(median(xs.map((x) => x.wallMs)) / base).toFixed(2),
    };
    console.log(
      `sparse filter (${store}) ${name}: ${matches} matches in ${fmt(SPARSE_EVENTS)} events, wall ${row.wallMs.join(' / ')} ms ` +
        `(${row.wallPerEventUs.join(' / ')} µs per event passed; ×${row.wallVsTypeList} the type list), service CPU ${row.cpuUsPerEventPassed.join(' / ')} µs per event`,
    );
    console.log(JSON.stringify(row));
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
