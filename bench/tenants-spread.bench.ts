import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { descendants } from '../test/support/host-processes';
import { exampleSources } from '../test/support/runtime-harness';
import { zipSources } from '../test/support/zip-writer';
import { DURATION_S, fmt, hammer, httpFigures, HttpFigures, roundRobinAppends, startChild, stopChild, treeCpuMs } from './bench-util';

/**
 * Many tenants on one service: the bank-account reducer uploaded by each of TENANTS tenants, then
 * POST /events with 32 connections, round robin over the tenants, against the same load on one
 * tenant. With HOSTILE=1, the spread run again while one more tenant, whose reducer spins until its
 * deadline, appends in a loop: the others' errors and p99 against the run without it.
 * Env: TENANTS (default 40), BENCH_SECONDS, HOSTILE, and any service variable passed through
 * (RUNTIME_EXEC_HOSTS, RUNTIME_ISOLATION…); BENCH_MAIN: another built checkout's dist/src/main.js
 * (a baseline). Also reports the RSS of the service and its executors.
 */
const ADMIN = 'bench-admin-token-0123456789';
const TENANTS = Number(process.env.TENANTS ?? 40);
const AGGREGATES_PER_TENANT = 100;

async function tenant(url: string, name: string): Promise<string> {
  const r = await fetch(`${url}/admin/tenants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  return ((await r.json()) as { apiKey: string }).apiKey;
}

const SPIN = `using EventSourcing;
namespace Spin {
  public sealed class SpinState { public long N { get; set; } }
  [AggregateType("spin")]
  public sealed class SpinReducer : IReducer<SpinState> {
    public SpinState Apply(SpinState s, Event e) { while (s.N >= 0) s.N++; return s; }
  }
}`;

async function uploadBank(url: string, key: string, files = exampleSources('bank-account')): Promise<void> {
  const form = new FormData();
  form.append('file', new Blob([zipSources(files)]), 'bank.zip');
  form.append('reducerId', 'bank');
  const res = await fetch(`${url}/reducers/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
  if (res.status >= 300) throw new Error(`upload: ${res.status} ${await res.text()}`);
}

async function compiled(url: string, key: string): Promise<void> {
  for (;;) {
    const st = (await (await fetch(`${url}/reducers/bank/status`, { headers: { 'x-api-key': key } })).json()) as any;
    if (st.status === 'compiled') return;
    if (st.status === 'failed') throw new Error(st.compilationError);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Appends spread round robin over `keys` (each request to the next tenant). */
async function roundRobin(url: string, keys: string[], seconds: number): Promise<HttpFigures> {
  return httpFigures(await roundRobinAppends(url, keys, seconds, (n) => `account-${Math.floor(n / keys.length) % AGGREGATES_PER_TENANT}`));
}

/** Runs `fn` and adds the CPU the service and its hosts spent per request (µs): steadier than throughput on a shared machine. */
async function withCpu(pid: number, fn: () => Promise<HttpFigures>): Promise<HttpFigures> {
  const before = treeCpuMs(pid);
  const f = await fn();
  return { ...f, serverCpuUs: ((treeCpuMs(pid) - before) * 1000) / Math.max(1, f.total) };
}

function rssMiB(pid: number): number {
  let kb = 0;
  for (const p of [pid, ...descendants(pid)]) {
    try {
      kb += Number(/^VmRSS:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      /* gone */
    }
  }
  return kb / 1024;
}

const row = (name: string, f: HttpFigures) =>
  `| ${name} | ${fmt(f.reqPerSec)} | ${f.p50} | ${f.p99} | ${f.non2xx + f.errors} | ${fmt(f.serverCpuUs ?? 0)} |`;

async function main(): Promise<void> {
  const passed = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('RUNTIME_')));
  console.log(
    `# tenants benchmark — ${new Date().toISOString()}, ${os.cpus().length} cores, ${TENANTS} tenants, ${JSON.stringify(passed)}\n`,
  );
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-ten-'));
  const { url, child } = await startChild(process.env.BENCH_MAIN ?? 'src/main.js', { ADMIN_TOKEN: ADMIN, DATA_DIR: dataDir });
  try {
    const keys: string[] = [];
    for (let t = 0; t < TENANTS; t++) keys.push(await tenant(url, `t${t}`));
    for (const k of keys) await uploadBank(url, k);
    for (const k of keys) await compiled(url, k);
    const one = (i: number) => ({ aggregateId: `account-${i % AGGREGATES_PER_TENANT}`, eventType: 'MoneyDeposited', data: { amount: 1 } });
    // The first tenant's executor warmed first, as in the figures.
    await hammer(`${url}/events`, { 'x-api-key': keys[0] }, one, 2);
    const pid = child.pid!;
    const single = await withCpu(pid, () => hammer(`${url}/events`, { 'x-api-key': keys[0] }, one));
    const spread = await withCpu(pid, () => roundRobin(url, keys, DURATION_S));
    console.log('| POST /events, 32 connections | appends/s | p50 ms | p99 ms | failed | CPU µs/append (service + hosts) |');
    console.log('|---|---:|---:|---:|---:|---:|');
    console.log(row('1 tenant', single));
    console.log(row(`${TENANTS} tenants, round robin`, spread));
    console.log(`\n${TENANTS} tenants / 1 tenant: ${fmt(spread.reqPerSec / single.reqPerSec, 2)}×`);
    if (process.env.HOSTILE === '1') {
      const hostile = await tenant(url, 'hostile');
      await uploadBank(url, hostile, [{ path: 'Spin.cs', content: SPIN }]);
      await compiled(url, hostile);
      let stop = false;
      const hostileAnswers: string[] = [];
      const loop = (async () => {
        for (let i = 0; !stop; i++) {
          const r = await fetch(`${url}/events`, {
            method: 'POST',
            headers: { 'x-api-key': hostile, 'content-type': 'application/json' },
            body: JSON.stringify({ aggregateId: `spin-${i}`, eventType: 'Go', data: {} }),
          });
          const body = (await r.json()) as any;
          hostileAnswers.push(`${r.status} ${body.stateError?.code ?? body.error ?? 'ok'}`);
        }
      })();
      const withHostile = await withCpu(pid, () => roundRobin(url, keys, DURATION_S));
      stop = true;
      await loop;
      console.log(`\n| the ${TENANTS} tenants, round robin | appends/s | p50 ms | p99 ms | failed | CPU µs/append |`);
      console.log('|---|---:|---:|---:|---:|---:|');
      console.log(row('without the hostile tenant', spread));
      console.log(row('while a hostile tenant spins on every call', withHostile));
      const counts = hostileAnswers.reduce<Record<string, number>>((m, a) => ((m[a] = (m[a] ?? 0) + 1), m), {});
      console.log(
        `\nthe hostile tenant's appends: ${JSON.stringify(counts)}; p99 with / without: ${fmt(withHostile.p99 / spread.p99, 2)}×`,
      );
    }
    console.log(`RSS of the service and every host below it: ${fmt(rssMiB(child.pid!))} MiB`);
  } finally {
    await stopChild(child);
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
