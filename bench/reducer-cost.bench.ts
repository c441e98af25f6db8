/**
 * Issue 25 item 4: what a reducer adds to an append. One service per checkout and store; tenant
 * with the bank-account reducer; POST /events (single) and POST /events/batch (10 events) with 32
 * connections, to the type `note` (no reducer) and `account` (reducer bound), alternating, BENCH_RUNS
 * times. Reported per run: appends/s, p99, and CPU µs per append of the service AND its executors
 * (process tree, /proc), and the ratios reducer / plain (throughput and CPU).
 *
 * BENCH_SERVICE_DIR: another built checkout (the code before a change) measured first, in the same
 * run. STORES=sqlite,postgres (default both). BENCH_SECONDS (default 5). PROFILE_DIR: the service
 * runs with --cpu-prof into that folder (one profile per service).
 *
 *   npm run bench:reducer-cost
 *   BENCH_SERVICE_DIR=/work/base BENCH_RUNS=3 node dist/bench/reducer-cost.bench.js
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { exampleSources } from '../test/support/runtime-harness';
import { ThrowawayPostgres } from '../test/support/throwaway-postgres';
import { zipSources } from '../test/support/zip-writer';
import {
  adminPost,
  BENCH_ADMIN_TOKEN,
  call,
  checkoutsUnderTest,
  cpuMsOf,
  fmt,
  hammer,
  HttpFigures,
  median,
  startChild,
  stopChild,
  treeCpuMs,
} from './bench-util';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const STORES = (process.env.STORES ?? 'sqlite,postgres').split(',');
const BATCH = 10;

async function uploadBank(url: string, key: string): Promise<void> {
  const form = new FormData();
  form.append('file', new Blob([zipSources(exampleSources('bank-account'))]), 'bank.zip');
  form.append('reducerId', 'bank');
  const res = await fetch(`${url}/reducers/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
  if (res.status >= 300) throw new Error(`upload: ${res.status} ${await res.text()}`);
  for (;;) {
    const st = await call(`${url}/reducers/bank/status`, 'GET', key);
    if (st.body.status === 'compiled') return;
    if (st.body.status === 'failed') throw new Error(st.body.compilationError);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** One load with the CPU the service and its executors spent per append (µs). */
async function measured(
  pid: number,
  url: string,
  key: string,
  type: string,
  batch: boolean,
): Promise<HttpFigures & { cpuUs: number; serviceUs: number }> {
  const before = treeCpuMs(pid);
  const serviceBefore = cpuMsOf(pid);
  const body = batch
    ? (i: number) => ({
        aggregateId: `${type}-${i % 5000}`,
        events: Array.from({ length: BATCH }, () => ({ eventType: 'MoneyDeposited', data: { amount: 1 } })),
      })
    : (i: number) => ({ aggregateId: `${type}-${i % 5000}`, eventType: 'MoneyDeposited', data: { amount: 1 } });
  const f = await hammer(`${url}/events${batch ? '/batch' : ''}`, { 'x-api-key': key }, body, SECONDS);
  if (f.non2xx + f.errors > 0) throw new Error(`${type}: ${f.non2xx} non-2xx, ${f.errors} errors`);
  const per = (ms: number) => (ms * 1000) / Math.max(1, f.total);
  return { ...f, cpuUs: per(treeCpuMs(pid) - before), serviceUs: per(cpuMsOf(pid) - serviceBefore) };
}

interface Row {
  checkout: string;
  store: string;
  kind: string;
  ratios: number[];
  cpuRatios: number[];
  plain: string[];
  reducer: string[];
}

async function main(): Promise<void> {
  console.log(`# reducer cost — ${new Date().toISOString()}, ${os.cpus().length} cores, ${RUNS} runs of ${SECONDS} s\n`);
  const pg = STORES.includes('postgres') ? await ThrowawayPostgres.start() : undefined;
  const rows: Row[] = [];
  try {
    for (const store of STORES) {
      for (const c of checkoutsUnderTest()) {
        const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-rc-'));
        const env: Record<string, string> = { ADMIN_TOKEN: BENCH_ADMIN_TOKEN, DATA_DIR: dataDir };
        if (store === 'postgres') env.DATABASE_URL = await pg!.createDatabase(`rc_${c.label}`);
        const prof = process.env.PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROFILE_DIR}/${c.label}-${store}`] : [];
        const { url, child } = await startChild(path.join(c.dir, 'dist/src/main.js'), env, prof);
        try {
          const { apiKey } = await adminPost(url, '/admin/tenants', { name: 'bench' });
          await uploadBank(url, apiKey);
          for (const batch of [false, true]) {
            const row: Row = {
              checkout: c.label,
              store,
              kind: batch ? `batch of ${BATCH}` : 'single',
              ratios: [],
              cpuRatios: [],
              plain: [],
              reducer: [],
            };
            await measured(child.pid!, url, apiKey, 'note', batch); // warm
            await measured(child.pid!, url, apiKey, 'account', batch);
            for (let r = 0; r < RUNS; r++) {
              const p = await measured(child.pid!, url, apiKey, 'note', batch);
              const s = await measured(child.pid!, url, apiKey, 'account', batch);
              row.ratios.push(s.reqPerSec / p.reqPerSec);
              row.cpuRatios.push(p.cpuUs / s.cpuUs);
              row.plain.push(`${fmt(p.reqPerSec)}/s p99 ${p.p99} ${fmt(p.cpuUs)} µs (service ${fmt(p.serviceUs)})`);
              row.reducer.push(`${fmt(s.reqPerSec)}/s p99 ${s.p99} ${fmt(s.cpuUs)} µs (service ${fmt(s.serviceUs)})`);
              console.log(
                `${c.label} ${store} ${row.kind} run ${r + 1}: plain ${row.plain[r]} | reducer ${row.reducer[r]} | ratio ${fmt(row.ratios[r], 2)}×`,
              );
            }
            rows.push(row);
          }
        } finally {
          await stopChild(child);
          fs.rmSync(dataDir, { recursive: true, force: true });
        }
      }
    }
  } finally {
    await pg?.stop();
  }
  console.log('\n| checkout | store | appends | reducer/plain req/s (median, runs) | plain/reducer CPU per request (median, runs) |');
  console.log('|---|---|---|---:|---:|');
  const list = (xs: number[]) => xs.map((x) => fmt(x, 2)).join(', ');
  for (const r of rows) {
    console.log(
      `| ${r.checkout} | ${r.store} | ${r.kind} | **${fmt(median(r.ratios), 2)}×** (${list(r.ratios)}) | ${fmt(median(r.cpuRatios), 2)}× (${list(r.cpuRatios)}) |`,
    );
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
