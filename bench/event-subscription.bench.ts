/**
 * Issue 24, item 2: a live event subscription's latency, append acknowledged → message received.
 *
 * The service (a child process; SQLite, or BENCH_STORE=postgres on a PostgreSQL the bench starts)
 * takes a steady BENCH_RATE appends/s (default 1,000; open loop: sent on a 10 ms clock whatever
 * the answers, 16 aggregates) for BENCH_SECONDS (default 20). Subscribed meanwhile to the tenant's
 * log, in this process: one WebSocket and one SSE client of GET /events/stream, and the baseline,
 * a plain poll of GET /events?afterPosition=P every BENCH_POLL_MS (default 100 ms, the next poll
 * as soon as the previous answer is in when it took longer). For each event: the time from its
 * 201 (read here) to its arrival on each subscriber; p50 / p99 / max in ms, over BENCH_RUNS runs
 * (default 3), the median run's figure with [min–max]. A message can beat the 201 (the append is
 * answered after it is committed and woken): those count as 0.
 *
 *   npm run bench:event-subscription
 *   BENCH_SECONDS=5 BENCH_RUNS=1 node dist/bench/event-subscription.bench.js   (small)
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SseCollector, WsCollector } from '../test/support/stream-clients';
import { ThrowawayPostgres } from '../test/support/throwaway-postgres';
import { adminPost, BENCH_ADMIN_TOKEN, call, fmt, median, pct, startChild, stopChild } from './bench-util';

const RATE = Number(process.env.BENCH_RATE ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const POLL_MS = Number(process.env.BENCH_POLL_MS ?? 100);
const STORE = process.env.BENCH_STORE ?? 'sqlite';
const TICK_MS = 10;

/** Arrival times by position, from the moment a message (or poll page) is parsed. */
type Arrivals = Map<number, number>;

function watchWs(ws: WsCollector, into: Arrivals): void {
  ws.socket.on('message', () => {
    const last = ws.messages[ws.messages.length - 1];
    if (last?.type === 'event' && !into.has(last.position)) into.set(last.position, performance.now());
  });
}

function watchSse(sse: SseCollector, into: Arrivals): void {
  // The collector parses as data comes; a 1 ms sampler would add up to 1 ms, so hook its array instead.
  const push = sse.events.push.bind(sse.events);
  sse.events.push = (...items) => {
    const now = performance.now();
    for (const e of items) if (e.event === 'event' && !into.has(Number(e.id))) into.set(Number(e.id), now);
    return push(...items);
  };
}

async function poll(url: string, key: string, from: number, into: Arrivals, stop: () => boolean): Promise<void> {
  let after = from;
  while (!stop()) {
    const started = performance.now();
    // fetch (its own connection pool), not `call`: the poll must not queue behind the appends' sockets.
    const res = await fetch(`${url}/events?afterPosition=${after}&limit=10000`, { headers: { 'x-api-key': key } });
    const body = (await res.json()) as { events: { position: number }[]; nextAfterPosition: number };
    const now = performance.now();
    for (const e of body.events) if (!into.has(e.position)) into.set(e.position, now);
    after = body.nextAfterPosition;
    const wait = POLL_MS - (performance.now() - started);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
}

interface RunFigures {
  [subscriber: string]: { p50: number; p99: number; max: number; missing: number };
}

async function oneRun(url: string, key: string): Promise<RunFigures> {
  const head = (await call(`${url}/events?direction=backward&limit=1`, 'GET', key)).body.events[0]?.position ?? 0;
  const acks = new Map<number, number>();
  const arrivals: Record<string, Arrivals> = { websocket: new Map(), sse: new Map(), [`poll every ${POLL_MS} ms`]: new Map() };
  const ws = await WsCollector.openEvents(url, key, `?afterPosition=${head}`);
  const sse = await SseCollector.openEvents(url, key, `?afterPosition=${head}`);
  watchWs(ws, arrivals.websocket);
  watchSse(sse, arrivals.sse);
  let stopping = false;
  const poller = poll(url, key, head, arrivals[`poll every ${POLL_MS} ms`], () => stopping);

  const inflight: Promise<void>[] = [];
  const start = performance.now();
  let sent = 0;
  let errors = 0;
  while (performance.now() - start < SECONDS * 1000) {
    const due = Math.floor(((performance.now() - start) / 1000) * RATE);
    for (; sent < due; sent++) {
      const n = sent;
      inflight.push(
        call(`${url}/events`, 'POST', key, { aggregateId: `acct-${n % 16}`, eventType: 'MoneyDeposited', data: { amount: n } }).then(
          (r) => {
            if (r.status === 201) acks.set(r.body.position, performance.now());
            else errors++;
          },
        ),
      );
    }
    await new Promise((r) => setTimeout(r, TICK_MS));
  }
  await Promise.all(inflight);
  const lastPosition = Math.max(...acks.keys());
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline && Object.values(arrivals).some((a) => !a.has(lastPosition))) await new Promise((r) => setTimeout(r, 20));
  stopping = true;
  await poller;
  await ws.close();
  sse.close();
  if (errors) console.log(`  ${errors} appends failed`);

  const out: RunFigures = {};
  for (const [name, a] of Object.entries(arrivals)) {
    const lat: number[] = [];
    let missing = 0;
    for (const [position, ackAt] of acks) {
      const at = a.get(position);
      if (at === undefined) missing++;
      else lat.push(Math.max(0, at - ackAt));
    }
    out[name] = { p50: pct(lat, 50), p99: pct(lat, 99), max: Math.max(...lat), missing };
  }
  console.log(`  run: ${fmt(acks.size)} appends acknowledged (${fmt(acks.size / SECONDS)}/s)`);
  return out;
}

const spread = (xs: number[]) => `${fmt(median(xs), 1)} [${fmt(Math.min(...xs), 1)}–${fmt(Math.max(...xs), 1)}]`;

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-sub-'));
  const pg = STORE === 'postgres' ? await ThrowawayPostgres.start() : undefined;
  const databaseUrl = pg ? await pg.createDatabase('bench_sub') : undefined;
  const env = {
    DATA_DIR: dataDir,
    ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    LOG_LEVEL: 'error',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  };
  const svc = await startChild('src/main.js', env);
  try {
    const created = await adminPost(svc.url, '/admin/tenants', { name: 'bench-sub' });
    const runs: RunFigures[] = [];
    for (let r = 0; r < RUNS; r++) runs.push(await oneRun(svc.url, created.apiKey));
    console.log(`\n${STORE}, ${fmt(RATE)} appends/s for ${SECONDS} s, ${RUNS} runs: ms from the 201 to the message, median run [min–max]`);
    console.log('| subscriber | p50 | p99 | max | missing |');
    console.log('|---|---:|---:|---:|---:|');
    for (const name of Object.keys(runs[0])) {
      const f = runs.map((x) => x[name]);
      const missing = f.map((x) => x.missing).reduce((a, b) => a + b, 0);
      console.log(
        `| ${name} | ${spread(f.map((x) => x.p50))} | ${spread(f.map((x) => x.p99))} | ${spread(f.map((x) => x.max))} | ${missing} |`,
      );
    }
  } finally {
    await stopChild(svc.child);
    await pg?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
