import autocannon from 'autocannon';
import { execSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { exampleSources } from '../test/support/runtime-harness';
import { zipSources } from '../test/support/zip-writer';
import { call, CONNECTIONS, cpuMsOf, DURATION_S, fmt, httpFigures, HttpFigures, pct, startChild, stopChild } from './bench-util';

/**
 * Many tenants on one service (issue 12). In one run: TENANTS tenants each with the bank-account
 * reducer, PROJECTION_TENANTS of them also with the customer-totals projection, then
 *  1. appends over HTTP spread over every tenant vs the same load on one tenant;
 *  2. the first append of tenants whose assemblies are loaded nowhere (after a restart);
 *  3. memory of the service plus every executor with all tenants' assemblies loaded;
 *  4. a noisy neighbour (A as fast as it can, B at 50/s);
 *  5. a hostile neighbour (A's reducer spins to its deadline on every call) while 99 tenants append;
 *  6. projections: live ack → state readable at 1,000 appends/s spread over the projection tenants.
 *
 * BENCH_SERVICE_DIR: another built checkout to measure instead (the code before a change);
 * TENANTS (1000), PROJECTION_TENANTS (100); SERVICE_ENV: extra env for the service, as JSON;
 * BENCH_PARTS (default every one: spread,memory,noisy,hostile,projections,cold) which parts run.
 * After the restart (part 2) the appends begin once `GET /health/ready` answers 200, as behind a
 * load balancer.
 * NOISY_A_PER_S: the noisy neighbour's own append limit (admin API; default none);
 * PROJECTION_RUNS: how many times the projections part is measured in the same service (default 1);
 * PROJECTION_RATE: its appends per second (default 1000, the issue's figure).
 */

const ADMIN = 'bench-admin-token-0123456789';
const TENANTS = Number(process.env.TENANTS ?? 1000);
const PROJECTION_TENANTS = Math.min(TENANTS, Number(process.env.PROJECTION_TENANTS ?? 100));
const serviceMain = process.env.BENCH_SERVICE_DIR ? path.resolve(process.env.BENCH_SERVICE_DIR, 'dist', 'src', 'main.js') : 'src/main.js';
const serviceEnv = JSON.parse(process.env.SERVICE_ENV ?? '{}') as Record<string, string>;
const PARTS = new Set((process.env.BENCH_PARTS ?? 'spread,memory,noisy,hostile,projections,cold').split(','));
const PROJECTION_RUNS = Math.max(1, Number(process.env.PROJECTION_RUNS ?? 1));
const PROJECTION_RATE = Number(process.env.PROJECTION_RATE ?? 1000);

const SPIN_REDUCER = `
using EventSourcing;
namespace Spin
{
    public sealed class SpinState { public long Turns { get; set; } }
    [AggregateType("spin")]
    public sealed class SpinReducer : IReducer<SpinState>
    {
        public SpinState Apply(SpinState state, Event e)
        {
            long turns = 0;
            while (turns >= 0) turns++;   // until the deadline kills the call
            state.Turns = turns;
            return state;
        }
    }
}`;

/** Readiness, as a load balancer would wait for it (a service without the check answers 200 at once). */
async function waitReady(url: string): Promise<void> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
    if ((await fetch(`${url}/health/ready`)).status === 200) return;
  }
  throw new Error('the service did not become ready in 60 s');
}

async function newTenantRecord(url: string, name: string): Promise<{ tenantId: string; apiKey: string }> {
  const r = await fetch(`${url}/admin/tenants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  if (r.status !== 201 && r.status !== 200) throw new Error(`tenant: ${r.status} ${await r.text()}`);
  return (await r.json()) as { tenantId: string; apiKey: string };
}

async function newTenant(url: string, name: string): Promise<string> {
  return (await newTenantRecord(url, name)).apiKey;
}

async function upload(url: string, key: string, kind: 'reducers' | 'projections', zip: Buffer): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([zip], { type: 'application/zip' }), `${kind}.zip`);
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${url}/${kind}/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
    const body = (await res.json()) as any;
    if (res.status === 202 || res.status === 201) return body.reducerId ?? body.uploadId;
    if (res.status === 429 && attempt < 100) {
      await new Promise((r) => setTimeout(r, 1000));
      continue;
    }
    throw new Error(`upload ${kind}: ${res.status} ${JSON.stringify(body)}`);
  }
}

async function waitCompiled(url: string, key: string, kind: 'reducers' | 'projections', id: string): Promise<any> {
  for (;;) {
    const st = await call(`${url}/${kind}/${id}/status`, 'GET', key);
    const s = st.body?.status;
    if (
      s === 'compiled' ||
      s === 'active' ||
      (kind === 'projections' && st.body?.projectionId && s !== 'compiling' && s !== 'pending_compilation')
    )
      return st.body;
    if (s === 'failed') throw new Error(`${kind} ${id} failed: ${JSON.stringify(st.body)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Runs `work` over `items` with `concurrency` workers. */
async function each<T>(items: T[], concurrency: number, work: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < items.length; i = next++) await work(items[i], i);
    }),
  );
}

/** POST /events at full speed, each request with the key of `keys[i % keys.length]`. */
async function hammerKeys(
  url: string,
  keys: string[],
  body: (i: number) => unknown,
  connections = CONNECTIONS,
  duration = DURATION_S,
  slow?: { overMs: number; at: number[] },
): Promise<HttpFigures> {
  let i = 0;
  const start = performance.now();
  const instance = autocannon({
    url: `${url}/events`,
    method: 'POST',
    connections,
    duration,
    requests: [
      {
        setupRequest: (req: any) => {
          const n = i++;
          req.headers = { 'content-type': 'application/json', 'x-api-key': keys[n % keys.length] };
          req.body = JSON.stringify(body(n));
          return req;
        },
      },
    ],
  } as autocannon.Options) as unknown as Promise<autocannon.Result> & { on(event: 'response', listener: (...args: any[]) => void): void };
  // Responses slower than `slow.overMs`: when they were answered (s into the run), to see whether a tail is one stall or spread.
  if (slow)
    instance.on(
      'response',
      (_c: unknown, _status: number, _bytes: number, ms: number) => ms > slow.overMs && slow.at.push((performance.now() - start) / 1000),
    );
  const result = await instance;
  return httpFigures(result);
}

const deposit = (n: number) => ({ aggregateId: `account-${n % 200}`, eventType: 'MoneyDeposited', data: { amount: 1 } });

/** Appends at `rate`/s for `seconds` with one key; latencies of the 2xx answers and the count of others. */
async function paced(
  url: string,
  key: string,
  rate: number,
  seconds: number,
  body: (i: number) => unknown,
): Promise<{ lat: number[]; failed: number; statuses: Record<number, number> }> {
  const lat: number[] = [];
  const statuses: Record<number, number> = {};
  let failed = 0;
  const inflight: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inflight.push(
      (async () => {
        const t = performance.now();
        const r = await call(`${url}/events`, 'POST', key, body(i));
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        if (r.status === 201) lat.push(performance.now() - t);
        else failed++;
      })(),
    );
  }
  await Promise.all(inflight);
  return { lat, failed, statuses };
}

/** RSS in MiB of a process and every descendant (the sandboxed executors and compilers run under it). */
function treeRssMb(pid: number): { total: number; processes: number; hosts: number } {
  const rows = execSync('ps -eo pid=,ppid=,rss=,args=')
    .toString()
    .trim()
    .split('\n')
    .map((l) => /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(.*)$/.exec(l)!.slice(1));
  const children = new Map<number, number[]>();
  for (const [p, pp] of rows) children.set(Number(pp), [...(children.get(Number(pp)) ?? []), Number(p)]);
  const tree = new Set<number>([pid]);
  for (const p of tree) for (const c of children.get(p) ?? []) tree.add(c);
  let total = 0;
  let hosts = 0;
  for (const [p, , rss, args] of rows) {
    if (!tree.has(Number(p))) continue;
    total += Number(rss) / 1024;
    if (/dotnet\S* \S*EventSourcing\.Runtime\.dll/.test(args) && !/bwrap|prlimit|setpriv/.test(args)) hosts++;
  }
  return { total, processes: tree.size, hosts };
}

/** CPU ms (user + system) so far of a process and every live descendant: the service's own threads, `executors` the runtime hosts. */
function treeCpuMs(pid: number): { service: number; executors: number } {
  const rows = execSync('ps -eo pid=,ppid=')
    .toString()
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/).map(Number));
  const children = new Map<number, number[]>();
  for (const [p, pp] of rows) children.set(pp, [...(children.get(pp) ?? []), p]);
  const tree = new Set<number>([pid]);
  for (const p of tree) for (const c of children.get(p) ?? []) tree.add(c);
  let executors = 0;
  for (const p of tree) {
    if (p === pid) continue;
    try {
      executors += cpuMsOf(p);
    } catch {
      /* exited meanwhile */
    }
  }
  return { service: cpuMsOf(pid), executors };
}

async function main(): Promise<void> {
  console.log(
    `# tenants benchmark — ${new Date().toISOString()}, ${os.cpus().length} cores, node ${process.version}, SQLite, ${TENANTS} tenants (${PROJECTION_TENANTS} with a projection), service ${serviceMain}`,
  );
  if (Object.keys(serviceEnv).length) console.log(`# service env: ${JSON.stringify(serviceEnv)}`);
  console.log(`# appends: autocannon, ${CONNECTIONS} connections, ${DURATION_S} s per figure\n`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-tenants-'));
  const env = { ADMIN_TOKEN: ADMIN, DATA_DIR: dataDir, ...serviceEnv };
  let svc = await startChild(serviceMain, env);
  try {
    // Setup: tenants, a reducer each, a projection for the first PROJECTION_TENANTS.
    const t0 = performance.now();
    const keys: string[] = [];
    for (let i = 0; i < TENANTS; i++) keys.push(await newTenant(svc.url, `t${i}`));
    const bank = zipSources(exampleSources('bank-account'));
    const totals = zipSources(exampleSources('customer-totals'));
    const projectionIds: string[] = [];
    await each(keys, 8, async (key, i) => {
      await waitCompiled(svc.url, key, 'reducers', await upload(svc.url, key, 'reducers', bank));
      if (i < PROJECTION_TENANTS)
        projectionIds[i] = (
          await waitCompiled(svc.url, key, 'projections', await upload(svc.url, key, 'projections', totals))
        ).projectionId;
    });
    console.log(
      `setup: ${TENANTS} tenants, reducers compiled and bound, ${PROJECTION_TENANTS} projections active, in ${fmt((performance.now() - t0) / 1000, 1)} s`,
    );

    // 1. One tenant vs every tenant (its executor warmed first, as in the issue).
    if (PARTS.has('spread')) {
      await hammerKeys(svc.url, [keys[0]], deposit, CONNECTIONS, 2);
      const one = await hammerKeys(svc.url, [keys[0]], deposit);
      await hammerKeys(svc.url, keys, deposit, CONNECTIONS, 5); // every tenant's first appends (loads)
      const all = await hammerKeys(svc.url, keys, deposit);
      const row = (name: string, f: HttpFigures) =>
        `| ${name} | ${fmt(f.reqPerSec)} | ${fmt(f.p50, 1)} | ${fmt(f.p99, 1)} | ${f.non2xx + f.errors} |`;
      console.log('\n| appends with the bank-account reducer | appends/s | p50 ms | p99 ms | failed |');
      console.log('|---|---:|---:|---:|---:|');
      console.log(row('1 tenant', one));
      console.log(row(`${TENANTS} tenants, round robin`, all));
      console.log(`spread over ${TENANTS} tenants vs one: ${fmt(all.reqPerSec / one.reqPerSec, 2)}× (target ≥ 0.7×)`);
    }

    // 3. Memory with every tenant's assemblies loaded.
    if (PARTS.has('memory')) {
      const mem = treeRssMb(svc.child.pid!);
      console.log(`memory, service + ${mem.hosts} runtime hosts (${mem.processes} processes): ${fmt(mem.total)} MiB RSS (target ≤ 2,048)`);
    }

    // 4. Noisy neighbour: B alone at 50/s, then with A as fast as it can.
    if (PARTS.has('noisy')) {
      // NOISY_A_PER_S: A's own append limit, set through the admin API as an operator would (this run's
      // quota defaults are off, so that the one-tenant figure above is not capped); unset: A unlimited.
      let noisyKey = keys[2];
      if (process.env.NOISY_A_PER_S) {
        const a = await newTenantRecord(svc.url, 'noisy-a');
        await waitCompiled(
          svc.url,
          a.apiKey,
          'reducers',
          await upload(svc.url, a.apiKey, 'reducers', zipSources(exampleSources('bank-account'))),
        );
        const perS = Number(process.env.NOISY_A_PER_S);
        const put = await fetch(`${svc.url}/admin/tenants/${a.tenantId}/limits`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ appendRequests: { quota: perS * 10, windowSeconds: 10 } }),
        });
        if (put.status !== 200) throw new Error(`limits: ${put.status} ${await put.text()}`);
        noisyKey = a.apiKey;
        console.log(`noisy neighbour: A's limit ${perS} appends/s (admin API)`);
      }
      await paced(svc.url, keys[1], 50, 2, deposit); // B's assembly loaded: its first calls are not the figure
      const bAlone = await paced(svc.url, keys[1], 50, DURATION_S, deposit);
      const [aBusy, bBusy] = await Promise.all([
        hammerKeys(svc.url, [noisyKey], deposit),
        paced(svc.url, keys[1], 50, DURATION_S, deposit),
      ]);
      console.log(
        `noisy neighbour: B at 50/s alone p99 ${fmt(pct(bAlone.lat, 99), 1)} ms, with A flooding p99 ${fmt(pct(bBusy.lat, 99), 1)} ms (${fmt(pct(bBusy.lat, 99) / pct(bAlone.lat, 99), 2)}×, target ≤ 2×), B failed ${bBusy.failed}; A: ${fmt(aBusy.total)} answered, ${fmt(aBusy.non2xx)} non-2xx (429 expected once over its limit)`,
      );
    }

    // 5. Hostile neighbour: a spinning reducer in tenant H while 99 tenants append.
    if (PARTS.has('hostile')) {
      const hostile = await newTenant(svc.url, 'hostile');
      await waitCompiled(
        svc.url,
        hostile,
        'reducers',
        await upload(svc.url, hostile, 'reducers', zipSources([{ path: 'Spin.cs', content: SPIN_REDUCER }])),
      );
      const innocents = keys.slice(0, 99);
      // Every innocent tenant's assembly loaded first, so that the calm run measures no loads.
      await hammerKeys(svc.url, innocents, deposit, 16, 2);
      const calmSlow = { overMs: 100, at: [] as number[] };
      const calm = await hammerKeys(svc.url, innocents, deposit, 16, DURATION_S, calmSlow);
      let spinning = true;
      let hostileCalls = 0;
      let hostileHangUps = 0;
      const spinner = (async () => {
        await Promise.all(
          Array.from({ length: 4 }, async (_, w) => {
            for (let i = 0; spinning; i++) {
              // Its own answers may be a hang-up: at nice 19 on a busy machine its calls can outlast REQUEST_TIMEOUT_MS.
              await call(`${svc.url}/events`, 'POST', hostile, { aggregateId: `spin-${w}-${i}`, eventType: 'Tick', data: {} }).catch(
                () => hostileHangUps++,
              );
              hostileCalls++;
            }
          }),
        );
      })();
      const underSlow = { overMs: 100, at: [] as number[] };
      const under = await hammerKeys(svc.url, innocents, deposit, 16, DURATION_S, underSlow);
      spinning = false;
      await spinner;
      console.log(
        `hostile neighbour (reducer spinning to its deadline, ${hostileCalls} calls, ${hostileHangUps} hung up): ${innocents.length} tenants p99 ${fmt(calm.p99, 1)} ms calm → ${fmt(under.p99, 1)} ms (${fmt(under.p99 / calm.p99, 2)}×, target ≤ 2×), errors ${under.non2xx + under.errors} (target 0)`,
      );
      const bySecond = (at: number[]) =>
        Array.from({ length: DURATION_S }, (_, s) => at.filter((t) => t >= s && t < s + 1).length).join(' ');
      console.log(
        `  answers over 100 ms per second of the run: calm [${bySecond(calmSlow.at)}] of ${fmt(calm.total)}; A spinning [${bySecond(underSlow.at)}] of ${fmt(under.total)}; appends/s ${fmt(calm.reqPerSec)} → ${fmt(under.reqPerSec)}`,
      );
    }

    // 6. Projections: 1,000 appends/s over the projection tenants, ack → state readable.
    if (PARTS.has('projections')) {
      let lat: number[] = [];
      const live = async (rate: number, seconds: number, record: boolean) => {
        const inflight: Promise<void>[] = [];
        const start = performance.now();
        for (let i = 0; i < rate * seconds; i++) {
          const wait = start + (i * 1000) / rate - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          const t = i % PROJECTION_TENANTS;
          inflight.push(
            (async () => {
              const customer = `c-${i % 50}`;
              const r = await call(`${svc.url}/events`, 'POST', keys[t], {
                aggregateId: `order-${i}`,
                eventType: 'OrderPlaced',
                data: { customerId: customer, lines: [{ sku: 'x', qty: 1, price: 1.5 }] },
              });
              if (r.status !== 201) return;
              const acked = performance.now();
              const s = await call(
                `${svc.url}/projections/${projectionIds[t]}/state/${customer}?minPosition=${r.body.position}`,
                'GET',
                keys[t],
              );
              if (record && s.status === 200) lat.push(performance.now() - acked);
            })(),
          );
        }
        await Promise.all(inflight);
      };
      await live(200, 2, false);
      for (let run = 0; run < PROJECTION_RUNS; run++) {
        lat = [];
        const cpu0 = treeCpuMs(svc.child.pid!);
        await live(PROJECTION_RATE, DURATION_S, true);
        const cpu1 = treeCpuMs(svc.child.pid!);
        const perEvent = (ms: number) => fmt((ms * 1000) / (PROJECTION_RATE * DURATION_S), 0);
        console.log(
          `projections: ${fmt(PROJECTION_RATE)} appends/s over ${PROJECTION_TENANTS} tenants, ack → state readable p50 ${fmt(pct(lat, 50), 1)} ms, p99 ${fmt(pct(lat, 99), 1)} ms (${fmt(lat.length)} samples; target p99 ≤ 50 ms); CPU per append + read: service ${perEvent(cpu1.service - cpu0.service)} µs, executors ${perEvent(cpu1.executors - cpu0.executors)} µs; load ${os.loadavg()[0].toFixed(1)}`,
        );
      }
    }

    // 2. First append of tenants whose assemblies are loaded nowhere: a fresh service process.
    if (PARTS.has('cold')) {
      await stopChild(svc.child);
      const restarted = performance.now();
      svc = await startChild(serviceMain, env);
      const live = performance.now();
      await waitReady(svc.url);
      console.log(
        `restart: /health answers after ${fmt(live - restarted)} ms, /health/ready after ${fmt(performance.now() - restarted)} ms`,
      );
      const first: number[] = [];
      const sample = keys.slice(PROJECTION_TENANTS, PROJECTION_TENANTS + 200);
      await each(sample, 4, async (key) => {
        const t = performance.now();
        const r = await call(`${svc.url}/events`, 'POST', key, {
          aggregateId: 'account-cold',
          eventType: 'MoneyDeposited',
          data: { amount: 1 },
        });
        if (r.status === 201) first.push(performance.now() - t);
      });
      console.log(
        `first append of a tenant loaded nowhere (${first.length} tenants after a restart, 4 at a time): p50 ${fmt(pct(first, 50), 1)} ms, p99 ${fmt(pct(first, 99), 1)} ms (target p99 ≤ 250)`,
      );
    }
  } finally {
    await stopChild(svc.child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
