import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AppendBatcher } from '../src/events/append-batcher';
import { PostgresStore } from '../src/store/postgres/postgres-store';
import { ThrowawayPostgres } from '../test/support/throwaway-postgres';
import {
  checkoutsUnderTest,
  closedLoop,
  CONNECTIONS,
  DURATION_S,
  fmt,
  hammer,
  HttpFigures,
  median,
  startChild,
  stopChild,
} from './bench-util';

const ADMIN = 'bench-admin-token-0123456789';
const AGGREGATES = 5000;

const single = (i: number) => ({ aggregateId: `acct-${i % AGGREGATES}`, eventType: 'Deposited', data: { amount: 10, i } });
/** Money and ids as clients send them: digits a double would change, so the body takes the source-text scan. */
const exact = (i: number) =>
  `{"aggregateId":"pay-${i % AGGREGATES}","eventType":"Paid","data":{"amount":12345678901234567.89,"price":79.90,"id":9007199254740993,"i":${i}}}`;
const batch = (i: number) => ({
  aggregateId: `ledger-${i % AGGREGATES}`,
  events: Array.from({ length: 100 }, (_, k) => ({ eventType: 'Line', data: { amount: k, i } })),
});

interface ServiceFigures {
  single: HttpFigures;
  exact: HttpFigures;
  batch: HttpFigures;
}

/** `main`: this checkout's `dist/src/main.js`, or another built checkout's (BENCH_BASELINE_DIR). */
async function serviceFigures(env: Record<string, string>, main = 'src/main.js'): Promise<ServiceFigures> {
  const { url, child } = await startChild(main, { ADMIN_TOKEN: ADMIN, ...env });
  try {
    const t = await fetch(`${url}/admin/tenants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench' }),
    }).then((r) => r.json() as Promise<{ apiKey: string }>);
    const headers = { 'x-api-key': t.apiKey };
    await hammer(`${url}/events`, headers, single, 2); // warm-up: JIT, caches, first inserts
    const s = await hammer(`${url}/events`, headers, single, undefined, child.pid);
    const x = await hammer(`${url}/events`, headers, exact, undefined, child.pid);
    const b = await hammer(`${url}/events/batch`, headers, batch, undefined, child.pid);
    return { single: s, exact: x, batch: b };
  } finally {
    await stopChild(child);
  }
}

async function storeLevel(pg: ThrowawayPostgres): Promise<{ ours: number; emmett: number }> {
  const seconds = Math.max(3, Math.round(DURATION_S / 2));
  const store = new PostgresStore({ connectionString: await pg.createDatabase('bench_store') });
  await store.migrate();
  await store.tenants.createTenant({ tenantId: 't', name: 't', createdAt: Date.now() });
  const batcher = new AppendBatcher(store.events, { maxConcurrentCommits: 2 }); // as the service runs it on PostgreSQL
  const ours = await closedLoop(CONNECTIONS, seconds, (w, i) =>
    batcher.append({
      tenantId: 't',
      aggregateId: `s-${w}-${i % 100}`,
      inferredType: 's',
      events: [{ eventType: 'Tick', data: JSON.stringify({ i }) }],
    }),
  );
  await batcher.close();
  await store.close();

  const { getPostgreSQLEventStore } = await import('@event-driven-io/emmett-postgresql');
  const emmett = getPostgreSQLEventStore(await pg.createDatabase('bench_emmett'));
  await emmett.appendToStream('warmup', [{ type: 'Tick', data: { i: 0 } }]);
  const theirs = await closedLoop(CONNECTIONS, seconds, (w, i) =>
    emmett.appendToStream(`s-${w}-${i % 100}`, [{ type: 'Tick', data: { i } }]),
  );
  await emmett.close();
  return { ours, emmett: theirs };
}

async function main(): Promise<void> {
  // BENCH_SERVICE_DIR (issue 25): echo, singles and batches per store, this checkout against a base one, same run.
  if (process.env.BENCH_SERVICE_DIR || process.env.BENCH_HOTPATH === '1') return hotPath();
  const baseline = process.env.BENCH_BASELINE_DIR;
  // BENCH_COMPARE_ONLY=1: only the before/after table (the full figures take another three minutes).
  if (baseline && process.env.BENCH_COMPARE_ONLY === '1') return beforeAfter(path.resolve(baseline, 'dist', 'src', 'main.js'));
  // BENCH_METRICS=1: only the metrics on/off table (issue 14's overhead figure).
  if (process.env.BENCH_METRICS === '1') return metricsOverhead();
  console.log(`# append benchmark — ${new Date().toISOString()}, ${os.cpus().length} cores, node ${process.version}`);
  console.log(`# autocannon, ${CONNECTIONS} connections, ${DURATION_S} s per figure, ${AGGREGATES} aggregates\n`);

  const bare = await startChild('bench/bare-fastify.js', {});
  await hammer(`${bare.url}/echo`, {}, single, 2);
  const echo = await hammer(`${bare.url}/echo`, {}, single);
  await stopChild(bare.child);

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-'));
  const sqlite = await serviceFigures({ DATA_DIR: dataDir });
  fs.rmSync(dataDir, { recursive: true, force: true });

  const pg = await ThrowawayPostgres.start();
  try {
    const postgres = await serviceFigures({ DATABASE_URL: await pg.createDatabase('bench_http') });
    const store = await storeLevel(pg);

    const row = (name: string, f: HttpFigures, perReq = 1) =>
      `| ${name} | ${fmt(f.reqPerSec * perReq)} | ${fmt(f.p50, 1)} | ${fmt(f.p99, 1)} | ${f.non2xx + f.errors} |`;
    console.log('| figure | per second | p50 ms | p99 ms | failed |');
    console.log('|---|---:|---:|---:|---:|');
    console.log(row('bare Fastify echo (req/s, baseline)', echo));
    console.log(row('POST /events, SQLite (appends/s)', sqlite.single));
    console.log(row('POST /events, PostgreSQL (appends/s)', postgres.single));
    console.log(row('POST /events exact decimals, SQLite (appends/s)', sqlite.exact));
    console.log(row('POST /events exact decimals, PostgreSQL (appends/s)', postgres.exact));
    console.log(row('POST /events/batch ×100, SQLite (events/s)', sqlite.batch, 100));
    console.log(row('POST /events/batch ×100, PostgreSQL (events/s)', postgres.batch, 100));
    console.log('');
    console.log(
      `single appends vs bare Fastify: SQLite ${fmt((100 * sqlite.single.reqPerSec) / echo.reqPerSec)}%, PostgreSQL ${fmt((100 * postgres.single.reqPerSec) / echo.reqPerSec)}% (target ≥ 50%)`,
    );
    console.log(
      `batches: SQLite ${fmt(sqlite.batch.reqPerSec * 100)} events/s (target ≥ 50,000), PostgreSQL ${fmt(postgres.batch.reqPerSec * 100)} events/s (target ≥ 30,000)`,
    );
    console.log(
      `store level, ${CONNECTIONS} concurrent single-event appends on PostgreSQL: ours ${fmt(store.ours)}/s, emmett-postgresql appendToStream ${fmt(store.emmett)}/s, ratio ${fmt(store.ours / store.emmett, 1)}× (target ≥ 10×)`,
    );
  } finally {
    await pg.stop();
  }
  if (baseline) await beforeAfter(path.resolve(baseline, 'dist', 'src', 'main.js'));
}

/**
 * Issue 25 item 1: per round, the bare Fastify echo, then for each store (SQLite; PostgreSQL with
 * BENCH_POSTGRES=1) and each checkout (BENCH_SERVICE_DIR first, then this one; the order alternates
 * by round) single appends, exact-decimal appends and batches of 100: req/s, the ratio to the echo of
 * the same round, p99 and the service process's CPU per append. BENCH_ROUNDS (default 3) rounds.
 */
async function hotPath(): Promise<void> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const checkouts = checkoutsUnderTest();
  const pg = process.env.BENCH_POSTGRES === '1' ? await ThrowawayPostgres.start() : null;
  console.log(`# append hot path — ${new Date().toISOString()}, ${os.cpus().length} cores, node ${process.version}`);
  console.log(
    `# autocannon ${CONNECTIONS} connections, ${DURATION_S} s per figure, ${rounds} rounds, checkouts: ${checkouts.map((c) => `${c.label}=${c.dir}`).join(', ')}\n`,
  );
  type Row = { round: number; store: string; label: string; echo: HttpFigures; f: ServiceFigures };
  const rows: Row[] = [];
  let db = 0;
  try {
    for (let r = 0; r < rounds; r++) {
      const bare = await startChild('bench/bare-fastify.js', {});
      await hammer(`${bare.url}/echo`, {}, single, 2);
      const echo = await hammer(`${bare.url}/echo`, {}, single, undefined, bare.child.pid);
      await stopChild(bare.child);
      for (const store of pg ? ['sqlite', 'postgres'] : ['sqlite']) {
        for (const c of r % 2 === 0 ? checkouts : [...checkouts].reverse()) {
          const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-'));
          const env: Record<string, string> =
            store === 'sqlite' ? { DATA_DIR: dataDir } : { DATABASE_URL: await pg!.createDatabase(`bench_hot_${db++}`) };
          const f = await serviceFigures(env, path.join(c.dir, 'dist', 'src', 'main.js'));
          fs.rmSync(dataDir, { recursive: true, force: true });
          rows.push({ round: r + 1, store, label: c.label, echo, f });
          const s = f.single;
          console.log(
            `round ${r + 1} ${store} ${c.label}: echo ${fmt(echo.reqPerSec)}/s (${fmt(echo.serverCpuUs ?? 0, 1)} µs); single ${fmt(s.reqPerSec)}/s = ${fmt(s.reqPerSec / echo.reqPerSec, 2)}×, p99 ${fmt(s.p99, 1)} ms, ${fmt(s.serverCpuUs ?? 0, 1)} µs/append; batch ${fmt(f.batch.reqPerSec * 100)} ev/s, p99 ${fmt(f.batch.p99, 1)} ms`,
          );
        }
      }
    }
  } finally {
    await pg?.stop();
  }
  const failed = rows.reduce(
    (n, x) => n + x.f.single.non2xx + x.f.single.errors + x.f.batch.non2xx + x.f.batch.errors + x.f.exact.non2xx + x.f.exact.errors,
    0,
  );
  const col = (xs: Row[], v: (x: Row) => number, d: number) =>
    `${xs.map((x) => fmt(v(x), d)).join(' / ')} (median ${fmt(median(xs.map(v)), d)})`;
  console.log(
    '\n| store | checkout | single appends/s | ÷ echo same round | single p99 ms | µs CPU/append | exact-decimal appends/s | batch ×100 events/s | batch p99 ms | µs CPU/batched event |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const store of pg ? ['sqlite', 'postgres'] : ['sqlite'])
    for (const c of checkouts) {
      const xs = rows.filter((x) => x.store === store && x.label === c.label);
      console.log(
        `| ${store} | ${c.label} | ${col(xs, (x) => x.f.single.reqPerSec, 0)} | ${col(xs, (x) => x.f.single.reqPerSec / x.echo.reqPerSec, 2)} | ${col(xs, (x) => x.f.single.p99, 0)} | ${col(xs, (x) => x.f.single.serverCpuUs ?? 0, 0)} | ${col(xs, (x) => x.f.exact.reqPerSec, 0)} | ${col(xs, (x) => x.f.batch.reqPerSec * 100, 0)} | ${col(xs, (x) => x.f.batch.p99, 0)} | ${col(xs, (x) => (x.f.batch.serverCpuUs ?? 0) / 100, 1)} |`,
      );
    }
  const echoes = [...new Set(rows.map((x) => x.echo))];
  console.log(
    `\nbare Fastify echo: ${col(
      echoes.map((e) => ({ echo: e }) as Row),
      (x) => x.echo.reqPerSec,
      0,
    )} req/s, ${col(
      echoes.map((e) => ({ echo: e }) as Row),
      (x) => x.echo.serverCpuUs ?? 0,
      1,
    )} µs CPU/request`,
  );
  console.log(`failed requests: ${failed}`);
}

/**
 * The same SQLite figures for a baseline checkout and this one, alternating (before, after, before,
 * after…) so that the machine's drift hits both alike. BENCH_ROUNDS (default 3) rounds.
 */
async function beforeAfter(baselineMain: string): Promise<void> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const runs: Record<'before' | 'after', ServiceFigures[]> = { before: [], after: [] };
  for (let r = 0; r < rounds; r++) {
    // Alternate who goes first, so that a machine getting busier or quieter favours neither.
    const order = [
      ['before', baselineMain],
      ['after', 'src/main.js'],
    ] as const;
    for (const [which, main] of r % 2 === 0 ? order : [...order].reverse()) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-'));
      runs[which].push(await serviceFigures({ DATA_DIR: dataDir }, main));
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
  const list = (fs_: ServiceFigures[], pick: (f: ServiceFigures) => HttpFigures, perReq = 1) =>
    fs_.map((f) => fmt(pick(f).reqPerSec * perReq)).join(' / ');
  const cpu = (fs_: ServiceFigures[], pick: (f: ServiceFigures) => HttpFigures, perReq = 1) =>
    fs_.map((f) => fmt((pick(f).serverCpuUs ?? 0) / perReq, 1)).join(' / ');
  console.log(`\n# before (${baselineMain}) vs after (this checkout), SQLite, ${rounds} alternating rounds\n`);
  console.log('| figure | before | after |');
  console.log('|---|---|---|');
  console.log(`| POST /events (appends/s) | ${list(runs.before, (f) => f.single)} | ${list(runs.after, (f) => f.single)} |`);
  console.log(`| POST /events exact decimals (appends/s) | ${list(runs.before, (f) => f.exact)} | ${list(runs.after, (f) => f.exact)} |`);
  console.log(
    `| POST /events/batch ×100 (events/s) | ${list(runs.before, (f) => f.batch, 100)} | ${list(runs.after, (f) => f.batch, 100)} |`,
  );
  console.log(`| server CPU per single append (µs) | ${cpu(runs.before, (f) => f.single)} | ${cpu(runs.after, (f) => f.single)} |`);
  console.log(`| server CPU per exact-decimals append (µs) | ${cpu(runs.before, (f) => f.exact)} | ${cpu(runs.after, (f) => f.exact)} |`);
  console.log(`| server CPU per batched event (µs) | ${cpu(runs.before, (f) => f.batch, 100)} | ${cpu(runs.after, (f) => f.batch, 100)} |`);
}

/**
 * Metrics on (the default) against the same build with METRICS_ENABLED=false (tracing is off in
 * both: it is off unless OTEL_EXPORTER_OTLP_ENDPOINT is set), SQLite, single `POST /events`:
 * appends/s and the server's CPU per append, BENCH_ROUNDS (default 3) alternating rounds.
 */
async function metricsOverhead(): Promise<void> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const runs: Record<'on' | 'off', HttpFigures[]> = { on: [], off: [] };
  console.log(`# metrics on vs off — ${new Date().toISOString()}, ${os.cpus().length} cores, node ${process.version}`);
  console.log(`# SQLite, POST /events, autocannon ${CONNECTIONS} connections, ${DURATION_S} s per figure, ${rounds} alternating rounds\n`);
  for (let r = 0; r < rounds; r++) {
    // Alternate who goes first, so that a machine getting busier or quieter favours neither.
    for (const which of r % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-'));
      const { url, child } = await startChild('src/main.js', {
        ADMIN_TOKEN: ADMIN,
        DATA_DIR: dataDir,
        METRICS_ENABLED: String(which === 'on'),
      });
      try {
        const t = await fetch(`${url}/admin/tenants`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'bench' }),
        }).then((res) => res.json() as Promise<{ apiKey: string }>);
        const headers = { 'x-api-key': t.apiKey };
        await ready(url); // the executors' start and warm-up are not measured with the appends
        await hammer(`${url}/events`, headers, single, 2); // warm-up: JIT, caches, first inserts
        runs[which].push(await hammer(`${url}/events`, headers, single, undefined, child.pid));
        // The switch really switched: counted when on, no route when off.
        const scrape = await fetch(`${url}/metrics`);
        const counted =
          which === 'on' ? /eventstore_append_requests_total\{store="sqlite"\} [1-9]/.test(await scrape.text()) : scrape.status === 404;
        if (!counted) throw new Error(`metrics ${which}: /metrics answered ${scrape.status} without the expected figures`);
      } finally {
        await stopChild(child);
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    }
  }
  const rate = (xs: HttpFigures[]) => xs.map((f) => f.reqPerSec);
  const cpu = (xs: HttpFigures[]) => xs.map((f) => f.serverCpuUs ?? 0);
  const row = (name: string, on: number[], off: number[], digits: number) =>
    `| ${name} | ${off.map((v) => fmt(v, digits)).join(' / ')} (median ${fmt(median(off), digits)}) | ${on.map((v) => fmt(v, digits)).join(' / ')} (median ${fmt(median(on), digits)}) | ${fmt((100 * (median(on) - median(off))) / median(off), 1)} % |`;
  console.log('| figure | metrics off | metrics on (default) | (on − off) / off, medians |');
  console.log('|---|---|---|---:|');
  console.log(row('POST /events (appends/s)', rate(runs.on), rate(runs.off), 0));
  console.log(row('server CPU per append (µs)', cpu(runs.on), cpu(runs.off), 1));
  const failed = [...runs.on, ...runs.off].reduce((n, f) => n + f.non2xx + f.errors, 0);
  console.log(`\nfailed requests: ${failed}`);
}

/** Waits (up to 30 s) for GET /health/ready: the runtime's executors started and warmed. */
async function ready(url: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && (await fetch(`${url}/health/ready`).catch(() => null))?.status !== 200) {
    await new Promise((r) => setTimeout(r, 200));
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
