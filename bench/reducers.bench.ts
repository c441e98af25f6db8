import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { exampleSources } from '../test/support/runtime-harness';
import { zipSources } from '../test/support/zip-writer';
import { fmt, hammer, pct, startChild, stopChild } from './bench-util';

const ADMIN = 'bench-admin-token-0123456789';

async function json(url: string, method: string, key: string, body?: unknown): Promise<any> {
  const res = await fetch(url, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return res.json();
}

async function tenant(url: string, name: string): Promise<string> {
  const r = await fetch(`${url}/admin/tenants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  return ((await r.json()) as { apiKey: string }).apiKey;
}

async function uploadBank(url: string, key: string): Promise<void> {
  const form = new FormData();
  form.append('file', new Blob([zipSources(exampleSources('bank-account'))]), 'bank.zip');
  form.append('reducerId', 'bank');
  await fetch(`${url}/reducers/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
  for (;;) {
    const st = await json(`${url}/reducers/bank/status`, 'GET', key);
    if (st.status === 'compiled') return;
    if (st.status === 'failed') throw new Error(st.compilationError);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function sequentialLatency(url: string, key: string, n: number, id: (i: number) => string): Promise<number[]> {
  const lat: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await json(`${url}/events`, 'POST', key, { aggregateId: id(i), eventType: 'MoneyDeposited', data: { amount: 1 } });
    if (r.state === undefined) throw new Error(`no state: ${JSON.stringify(r)}`);
    lat.push(performance.now() - t0);
  }
  return lat;
}

async function main(): Promise<void> {
  console.log(`# reducers benchmark — ${new Date().toISOString()}, ${os.cpus().length} cores, node ${process.version}, SQLite store\n`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-red-'));
  const { url, child } = await startChild('src/main.js', { ADMIN_TOKEN: ADMIN, DATA_DIR: dataDir });
  try {
    const key = await tenant(url, 'bench');
    await uploadBank(url, key);
    const headers = { 'x-api-key': key };
    const plain = (i: number) => ({ aggregateId: `note-${i % 5000}`, eventType: 'MoneyDeposited', data: { amount: 1 } });
    const stateful = (i: number) => ({ aggregateId: `account-${i % 5000}`, eventType: 'MoneyDeposited', data: { amount: 1 } });
    await hammer(`${url}/events`, headers, plain, 2);
    await hammer(`${url}/events`, headers, stateful, 3); // warm: executor, snapshot cache
    const without = await hammer(`${url}/events`, headers, plain);
    const withReducer = await hammer(`${url}/events`, headers, stateful);
    console.log('| POST /events, 32 connections | appends/s | p50 ms | p99 ms | failed |');
    console.log('|---|---:|---:|---:|---:|');
    console.log(
      `| no reducer bound (type note) | ${fmt(without.reqPerSec)} | ${without.p50} | ${without.p99} | ${without.non2xx + without.errors} |`,
    );
    console.log(
      `| bank-account reducer bound (type account) | ${fmt(withReducer.reqPerSec)} | ${withReducer.p50} | ${withReducer.p99} | ${withReducer.non2xx + withReducer.errors} |`,
    );
    console.log(`\nwith reducer / without: ${fmt((100 * withReducer.reqPerSec) / without.reqPerSec)}% (target ≥ 80%)\n`);

    // An aggregate with 10,000 events vs fresh aggregates: one client, sequential appends.
    for (let b = 0; b < 100; b++) {
      await json(`${url}/events/batch`, 'POST', key, {
        aggregateId: 'account-big',
        events: Array.from({ length: 100 }, () => ({ eventType: 'MoneyDeposited', data: { amount: 1 } })),
      });
    }
    await sequentialLatency(url, key, 200, () => 'account-big');
    const big = await sequentialLatency(url, key, 2000, () => 'account-big');
    const fresh = await sequentialLatency(url, key, 2000, (i) => `account-fresh-${i}`);
    console.log('| one client, sequential POST /events | p50 ms | p99 ms |');
    console.log('|---|---:|---:|');
    console.log(`| to an aggregate with 10,000+ events | ${fmt(pct(big, 50), 2)} | ${fmt(pct(big, 99), 2)} |`);
    console.log(`| to a fresh aggregate (its first event) | ${fmt(pct(fresh, 50), 2)} | ${fmt(pct(fresh, 99), 2)} |`);
    console.log(
      `\nratio 10k-event / fresh: p50 ${fmt(pct(big, 50) / pct(fresh, 50), 2)}×, p99 ${fmt(pct(big, 99) / pct(fresh, 99), 2)}× (target within 1.2×)\n`,
    );

    // Catch-up: 1M events in 10k aggregates written with no reducer bound, then the reducer arrives.
    const key2 = await tenant(url, 'catchup');
    const AGGS = Number(process.env.CATCHUP_AGGREGATES ?? 10_000);
    const PER = 100;
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let a = next++; a < AGGS; a = next++) {
          await json(`${url}/events/batch`, 'POST', key2, {
            aggregateId: `account-${a}`,
            events: Array.from({ length: PER }, () => ({ eventType: 'MoneyDeposited', data: { amount: 1 } })),
          });
        }
      }),
    );
    const loadS = (performance.now() - t0) / 1000;
    console.log(`loaded ${fmt(AGGS * PER)} events in ${fmt(AGGS)} aggregates in ${fmt(loadS, 1)} s`);
    const c0 = performance.now();
    await uploadBank(url, key2);
    let b: any;
    for (;;) {
      b = await json(`${url}/aggregate-types/account`, 'GET', key2);
      if (b.catchUp?.status === 'done') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const s = (performance.now() - c0) / 1000;
    console.log(
      `catch-up after binding (compile included): ${fmt(b.catchUp.aggregates)} aggregates, ${fmt(b.catchUp.events)} events in ${fmt(s, 1)} s = ${fmt(b.catchUp.aggregates / s)} aggregates/s, ${fmt(b.catchUp.events / s)} events/s`,
    );
    const check = await json(`${url}/aggregate-types/account/account-${AGGS - 1}/state`, 'GET', key2);
    console.log(`spot check account-${AGGS - 1}: version ${check.version}, balance ${check.state?.balance}`);
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
