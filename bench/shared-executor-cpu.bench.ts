import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { deployReducer, exampleSources } from '../test/support/tenant-code';
import {
  adminPost,
  BENCH_ADMIN_TOKEN,
  checkoutsUnderTest,
  CONNECTIONS,
  fmt,
  median,
  roundRobinAppends,
  startChild,
  stopChild,
  treeCpuMs,
} from './bench-util';

/**
 * CPU per append with a reducer on shared executors (the default isolation), for the whole process
 * tree — the service and its .NET executors — so that work moved into the executors (pool hygiene,
 * memory accounting) is counted; the tree's idle CPU rate, measured for IDLE_MS just before each
 * load, is subtracted (timers and sweeps are not an append's cost, and a slow, noisy run would
 * inflate them). Two loads: every append for one tenant (no tenant switch in an executor) and
 * appends spread round-robin over TENANTS tenants (a switch on almost every call).
 * With BENCH_SERVICE_DIR (a built baseline checkout) both checkouts run in the same process, in
 * alternating order per round (ROUNDS, default 3): the ratio this/base per round is the figure.
 *
 *   BENCH_SERVICE_DIR=/path/to/base ROUNDS=3 node dist/bench/shared-executor-cpu.bench.js
 */
const TENANTS = Number(process.env.TENANTS ?? 8);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const IDLE_MS = Number(process.env.IDLE_MS ?? 3000);

interface Figures {
  /** The tree's CPU during the load less its idle rate over the same time, per append: the work an append adds. */
  cpuUsPerAppend: number;
  /** The tree's CPU per second with no requests (sweeps, polls, timers), measured just before the load. */
  idleCpuMsPerSec: number;
  appendsPerSec: number;
  p99: number;
  failed: number;
}

/** Appends with the keys taken in turn, one per request. */
async function load(url: string, keys: string[], seconds: number, pid: number): Promise<Figures> {
  // Idle first: the service's own timers cost CPU whatever the load, and divided by the appends of a slow
  // (shared, noisy) run they would pass for a cost per append.
  const idle0 = treeCpuMs(pid);
  const idleT0 = performance.now();
  await new Promise((r) => setTimeout(r, IDLE_MS));
  const idleCpuMsPerSec = ((treeCpuMs(pid) - idle0) * 1000) / (performance.now() - idleT0);
  const t0 = performance.now();
  const cpu0 = treeCpuMs(pid);
  const result = await roundRobinAppends(url, keys, seconds, (n) => `account-${n % 2000}`);
  const cpu = treeCpuMs(pid) - cpu0 - (idleCpuMsPerSec * (performance.now() - t0)) / 1000;
  return {
    cpuUsPerAppend: (cpu * 1000) / Math.max(1, result.requests.total),
    idleCpuMsPerSec,
    appendsPerSec: result.requests.average,
    p99: result.latency.p99,
    failed: result.non2xx + result.errors,
  };
}

async function measure(dir: string): Promise<{ one: Figures; spread: Figures }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-shared-'));
  const { url, child } = await startChild(path.join(dir, 'dist', 'src', 'main.js'), {
    ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    DATA_DIR: dataDir,
    RUNTIME_ISOLATION: 'shared',
    FIRST_RUN_TENANT: 'false',
  });
  try {
    const keys: string[] = [];
    for (let t = 0; t < TENANTS; t++) {
      const { apiKey } = await adminPost(url, '/admin/tenants', { name: `shared-${t}` });
      await deployReducer(url, apiKey, 'bank', exampleSources('bank-account'));
      keys.push(apiKey);
    }
    await load(url, keys, 3, child.pid!); // warm: every tenant's assembly loaded, JIT, snapshot caches
    const one = await load(url, keys.slice(0, 1), SECONDS, child.pid!);
    const spread = await load(url, keys, SECONDS, child.pid!);
    return { one, spread };
  } finally {
    await stopChild(child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const checkouts = checkoutsUnderTest();
  console.log(
    `# shared-executor CPU per append — ${new Date().toISOString()}, ${os.cpus().length} cores, node ${process.version}, SQLite, ` +
      `bank-account reducer, ${CONNECTIONS} connections, ${SECONDS} s per load, ${TENANTS} tenants for the spread load, ${ROUNDS} rounds\n`,
  );
  console.log(
    '| round | checkout | load | CPU µs/append (service + executors, idle rate subtracted) | idle CPU ms/s | appends/s | p99 ms | failed |',
  );
  console.log('|---:|---|---|---:|---:|---:|---:|---:|');
  const cpu: Record<string, { one: number[]; spread: number[] }> = {};
  for (let r = 1; r <= ROUNDS; r++) {
    const order = r % 2 ? checkouts : [...checkouts].reverse();
    for (const c of order) {
      const f = await measure(c.dir);
      (cpu[c.label] ??= { one: [], spread: [] }).one.push(f.one.cpuUsPerAppend);
      cpu[c.label].spread.push(f.spread.cpuUsPerAppend);
      for (const [name, x] of [
        ['one tenant', f.one],
        [`${TENANTS} tenants`, f.spread],
      ] as const) {
        console.log(
          `| ${r} | ${c.label} | ${name} | ${fmt(x.cpuUsPerAppend)} | ${fmt(x.idleCpuMsPerSec, 1)} | ${fmt(x.appendsPerSec)} | ${x.p99} | ${x.failed} |`,
        );
      }
    }
  }
  console.log('');
  for (const [label, v] of Object.entries(cpu)) {
    console.log(
      `${label}: one tenant median ${fmt(median(v.one))} µs [${v.one.map((x) => fmt(x)).join(', ')}]; ` +
        `${TENANTS} tenants median ${fmt(median(v.spread))} µs [${v.spread.map((x) => fmt(x)).join(', ')}]`,
    );
  }
  if (cpu.base && cpu.this) {
    const ratio = (k: 'one' | 'spread') => cpu.this[k].map((x, i) => x / cpu.base[k][i]);
    for (const k of ['one', 'spread'] as const) {
      const rs = ratio(k);
      console.log(
        `this/base CPU per append, ${k === 'one' ? 'one tenant' : `${TENANTS} tenants`}: per round ${rs.map((x) => fmt(x, 3)).join(', ')}; median ${fmt(median(rs), 3)} (target ≤ 1.05)`,
      );
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
