import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import autocannon from 'autocannon';
import { ThrowawayPostgres } from '../test/support/throwaway-postgres';
import {
  adminPost,
  BENCH_ADMIN_TOKEN,
  CONNECTIONS,
  cpuMsOf,
  DURATION_S,
  fmt,
  hammer,
  HttpFigures,
  httpFigures,
  startChild,
  stopChild,
} from './bench-util';

/**
 * What reading the key's row on every request costs (API_KEY_CACHE_MS=0, the default since scoped
 * keys: a revocation holds at once on every instance) against caching resolved keys for 10 s (the
 * earlier default: a revocation took up to 10 s on the other instances). Per store (SQLite; and
 * PostgreSQL, started by the script, unless BENCH_STORES=sqlite), per setting, in alternating
 * order over BENCH_ROUNDS rounds (default 2): GET /auth/whoami (nearly nothing but authentication)
 * and POST /events (an append), as requests/s, p99 and the server's CPU per request.
 * BENCH_SECONDS (default 10) per figure.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const STORES = (process.env.BENCH_STORES ?? 'sqlite,postgres').split(',');
const SETTINGS = [
  { label: 'per request (0)', env: { API_KEY_CACHE_MS: '0' } },
  { label: 'cached 10 s', env: { API_KEY_CACHE_MS: '10000' } },
];

async function whoami(url: string, key: string, pid: number, duration: number): Promise<HttpFigures> {
  const before = cpuMsOf(pid);
  const result = await autocannon({ url: `${url}/auth/whoami`, connections: CONNECTIONS, duration, headers: { 'x-api-key': key } });
  return { ...httpFigures(result), serverCpuUs: ((cpuMsOf(pid) - before) * 1000) / Math.max(1, result.requests.total) };
}

/** Waits (up to 30 s) until the server is idle: it warms its compilers and executors at start, which would weigh on the first figure. */
async function settled(pid: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const before = cpuMsOf(pid);
    await new Promise((r) => setTimeout(r, 1_000));
    if (cpuMsOf(pid) - before < 50) return;
  }
}

async function measure(storeEnv: Record<string, string>, env: Record<string, string>) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-keys-'));
  const { url, child } = await startChild('src/main.js', { ADMIN_TOKEN: BENCH_ADMIN_TOKEN, DATA_DIR: dataDir, ...storeEnv, ...env });
  try {
    await settled(child.pid!);
    const { apiKey } = await adminPost(url, '/admin/tenants', { name: 'bench' });
    await whoami(url, apiKey, child.pid!, 2); // warm-up
    const who = await whoami(url, apiKey, child.pid!, DURATION_S);
    const append = await hammer(
      `${url}/events`,
      { 'x-api-key': apiKey },
      (i) => ({ aggregateId: `acct-${i % 5000}`, eventType: 'Deposited', data: { i } }),
      DURATION_S,
      child.pid!,
    );
    return { who, append };
  } finally {
    await stopChild(child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const pg = STORES.includes('postgres') ? await ThrowawayPostgres.start() : undefined;
  const rows: string[] = [];
  try {
    for (const store of STORES) {
      for (let round = 1; round <= ROUNDS; round++) {
        const order = round % 2 ? SETTINGS : [...SETTINGS].reverse();
        for (const s of order) {
          const storeEnv: Record<string, string> = store === 'postgres' ? { DATABASE_URL: await pg!.createDatabase('bench') } : {};
          const { who, append } = await measure(storeEnv, s.env);
          const bad = who.non2xx + who.errors + append.non2xx + append.errors;
          rows.push(
            `| ${store} | ${round} | ${s.label} | ${fmt(who.reqPerSec)} | ${fmt(who.p99)} | ${fmt(who.serverCpuUs ?? 0)} | ` +
              `${fmt(append.reqPerSec)} | ${fmt(append.p99)} | ${fmt(append.serverCpuUs ?? 0)} | ${bad} |`,
          );
          console.log(rows[rows.length - 1]);
        }
      }
    }
  } finally {
    await pg?.stop();
  }
  console.log(
    `\nKey lookups: API_KEY_CACHE_MS=0 vs 10000, ${CONNECTIONS} connections, ${DURATION_S} s per figure\n\n` +
      '| store | round | key lookup | whoami req/s | whoami p99 ms | whoami CPU µs/req | appends/s | append p99 ms | append CPU µs/req | failed |\n' +
      '|---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n' +
      rows.join('\n'),
  );
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
