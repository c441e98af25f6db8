import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import autocannon from 'autocannon';
import { ThrowawayPostgres } from '../test/support/throwaway-postgres';
import { BENCH_ADMIN_TOKEN, adminPost, CONNECTIONS, cpuMsOf, fmt, median, startChild, stopChild } from './bench-util';

/**
 * Issue 24 item 3: appends with a unique Idempotency-Key each vs without, in the same run, rounds
 * alternating (without, with, without, …) so that a noisy neighbour hits both alike. Per round:
 * appends/s and the service's CPU per append; then the medians and the spread of the per-pair ratio
 * (target: keyed ≥ 0.9× unkeyed). SQLite always; PostgreSQL with BENCH_POSTGRES=1.
 *
 *   BENCH_SECONDS (per round, default 5), BENCH_ROUNDS (pairs, default 3), BENCH_POSTGRES=1.
 */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const AGGREGATES = 5000;

interface Round {
  keyed: boolean;
  perSec: number;
  cpuUsPerAppend: number;
  non2xx: number;
}

async function round(url: string, apiKey: string, keyed: boolean, pid: number, seconds: number, tag: string): Promise<Round> {
  let i = 0;
  const cpuBefore = cpuMsOf(pid);
  const result = await autocannon({
    url: `${url}/events`,
    method: 'POST',
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      {
        setupRequest: (req: any) => {
          const n = i++;
          req.body = JSON.stringify({ aggregateId: `acct-${n % AGGREGATES}`, eventType: 'Deposited', data: { amount: 10, n } });
          req.headers = {
            'content-type': 'application/json',
            'x-api-key': apiKey,
            ...(keyed ? { 'idempotency-key': `${tag}-${n}` } : {}),
          };
          return req;
        },
      },
    ],
  } as autocannon.Options);
  const total = Math.max(1, result.requests.total);
  return { keyed, perSec: result.requests.average, cpuUsPerAppend: ((cpuMsOf(pid) - cpuBefore) * 1000) / total, non2xx: result.non2xx };
}

async function storeFigures(name: string, env: Record<string, string>): Promise<void> {
  const { url, child } = await startChild('src/main.js', { ADMIN_TOKEN: BENCH_ADMIN_TOKEN, ...env });
  try {
    const tenant = await adminPost(url, '/admin/tenants', { name: 'bench' });
    const pid = child.pid!;
    // Warm-up of both paths: JIT, statement caches, first pages of both tables.
    await round(url, tenant.apiKey, false, pid, 2, 'warm');
    await round(url, tenant.apiKey, true, pid, 2, 'warm');
    const rounds: Round[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (const keyed of [false, true]) {
        const x = await round(url, tenant.apiKey, keyed, pid, SECONDS, `r${r}`);
        rounds.push(x);
        console.log(
          `${name} round ${r + 1} ${keyed ? 'with key   ' : 'without key'}: ${fmt(x.perSec)} appends/s, ${fmt(x.cpuUsPerAppend)} µs CPU/append` +
            (x.non2xx ? `, ${x.non2xx} non-2xx` : ''),
        );
      }
    }
    const plain = rounds.filter((x) => !x.keyed);
    const keyed = rounds.filter((x) => x.keyed);
    const ratios = keyed.map((k, i) => k.perSec / plain[i].perSec);
    const cpuRatios = keyed.map((k, i) => k.cpuUsPerAppend / plain[i].cpuUsPerAppend);
    console.log(
      `${name}: median ${fmt(median(plain.map((x) => x.perSec)))} → ${fmt(median(keyed.map((x) => x.perSec)))} appends/s ` +
        `(keyed/unkeyed per pair ${fmt(median(ratios), 2)}×, spread ${fmt(Math.min(...ratios), 2)}–${fmt(Math.max(...ratios), 2)}); ` +
        `CPU/append ${fmt(median(plain.map((x) => x.cpuUsPerAppend)))} → ${fmt(median(keyed.map((x) => x.cpuUsPerAppend)))} µs ` +
        `(${fmt(median(cpuRatios), 2)}×, spread ${fmt(Math.min(...cpuRatios), 2)}–${fmt(Math.max(...cpuRatios), 2)})`,
    );
    if ([...plain, ...keyed].some((x) => x.non2xx > 0)) throw new Error(`${name}: some appends were refused`);
  } finally {
    await stopChild(child);
  }
}

async function main(): Promise<void> {
  console.log(
    `# idempotency-key benchmark — ${new Date().toISOString()}, ${os.cpus().length} cores, node ${process.version}, ` +
      `${ROUNDS} pairs of ${SECONDS} s rounds, ${CONNECTIONS} connections`,
  );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-idem-'));
  try {
    await storeFigures('sqlite', { DATA_DIR: dir });
    if (process.env.BENCH_POSTGRES === '1') {
      const pg = await ThrowawayPostgres.start();
      try {
        await storeFigures('postgres', { DATA_DIR: dir, DATABASE_URL: await pg.createDatabase('bench_idem') });
      } finally {
        await pg.stop();
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
