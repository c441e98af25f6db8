import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  BENCH_ADMIN_TOKEN,
  adminPost,
  checkoutsUnderTest,
  cpuMsOf,
  DURATION_S,
  fmt,
  hammer,
  httpFigures,
  HttpFigures,
  median,
  roundRobinAppends,
  startChild,
  stopChild,
} from './bench-util';

/**
 * Issue 25 item 5 (c): appends without a reducer spread round robin over TENANTS tenants (default
 * 1,000) against the same load on one tenant, 32 connections, rounds alternating. Target: spread ≥
 * 0.9× one tenant. Also the service's CPU per append of each. With BENCH_SERVICE_DIR, that
 * checkout first, in the same run. Env: TENANTS, BENCH_SECONDS, BENCH_ROUNDS (default 2).
 */
const TENANTS = Number(process.env.TENANTS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);

async function figures(dir: string): Promise<{ one: HttpFigures[]; spread: HttpFigures[] }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-spread-'));
  const { url, child } = await startChild(path.join(dir, 'dist/src/main.js'), { ADMIN_TOKEN: BENCH_ADMIN_TOKEN, DATA_DIR: dataDir });
  const pid = child.pid!;
  const withCpu = async (fn: () => Promise<HttpFigures>): Promise<HttpFigures> => {
    const before = cpuMsOf(pid);
    const f = await fn();
    return { ...f, serverCpuUs: ((cpuMsOf(pid) - before) * 1000) / Math.max(1, f.total) };
  };
  try {
    const keys: string[] = [];
    for (let t = 0; t < TENANTS; t++) keys.push((await adminPost(url, '/admin/tenants', { name: `t${t}` })).apiKey);
    const one = (i: number) => ({ aggregateId: `account-${i % 100}`, eventType: 'MoneyDeposited', data: { amount: 1 } });
    // Warm-up: JIT, every tenant's key looked up once.
    await hammer(`${url}/events`, { 'x-api-key': keys[0] }, one, 2);
    await roundRobinAppends(url, keys, 3, (n) => `account-${Math.floor(n / keys.length) % 100}`);
    const out = { one: [] as HttpFigures[], spread: [] as HttpFigures[] };
    for (let r = 0; r < ROUNDS; r++) {
      out.one.push(await withCpu(() => hammer(`${url}/events`, { 'x-api-key': keys[0] }, one)));
      out.spread.push(
        await withCpu(async () =>
          httpFigures(await roundRobinAppends(url, keys, DURATION_S, (n) => `account-${Math.floor(n / keys.length) % 100}`)),
        ),
      );
    }
    return out;
  } finally {
    await stopChild(child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(
    `# appends spread over ${TENANTS} tenants vs one — ${new Date().toISOString()}, ${os.cpus().length} cores, ${ROUNDS} rounds of ${DURATION_S} s\n`,
  );
  console.log('| service | round | 1 tenant appends/s (p99 ms, µs CPU) | spread appends/s (p99 ms, µs CPU) | spread / one |');
  console.log('|---|---:|---:|---:|---:|');
  const summary: string[] = [];
  for (const c of checkoutsUnderTest()) {
    const f = await figures(c.dir);
    f.one.forEach((o, i) => {
      const s = f.spread[i];
      console.log(
        `| ${c.label} | ${i + 1} | ${fmt(o.reqPerSec)} (${o.p99}, ${fmt(o.serverCpuUs ?? 0)}) | ${fmt(s.reqPerSec)} (${s.p99}, ${fmt(s.serverCpuUs ?? 0)}) | ${fmt(s.reqPerSec / o.reqPerSec, 2)}× |`,
      );
    });
    const ratios = f.spread.map((s, i) => s.reqPerSec / f.one[i].reqPerSec);
    const cpu = f.spread.map((s, i) => (s.serverCpuUs ?? 0) / (f.one[i].serverCpuUs ?? 1));
    summary.push(
      `${c.label}: spread/one ${fmt(median(ratios), 2)}× (spread ${fmt(Math.min(...ratios), 2)}–${fmt(Math.max(...ratios), 2)}, target ≥ 0.9×); ` +
        `CPU per append spread/one ${fmt(median(cpu), 2)}×`,
    );
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
