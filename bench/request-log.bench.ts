import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fmt, hammer, HttpFigures, median, NO_QUOTAS, stopChild } from './bench-util';
import { freePort } from '../test/support/free-port';

// What the per-request log line (issue 14: on by default, LOG_LEVEL=info) costs an append, against
// the same build with it off (LOG_LEVEL=warn), in the same run, rounds alternating which goes
// first. stdout goes to a file, as it would to a log collector's; what counts is the server's CPU
// per request (steadier than throughput on a shared machine) and the throughput.
//   npm run build && node dist/bench/request-log.bench.js     (BENCH_SECONDS, BENCH_ROUNDS)

const ADMIN = 'bench-admin-token-0123456789';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const single = (i: number) => ({ aggregateId: `acct-${i % 5000}`, eventType: 'Deposited', data: { amount: 10, i } });

async function start(env: Record<string, string>, logFile: string): Promise<{ url: string; child: ChildProcess; dataDir: string }> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-log-'));
  const out = fs.openSync(logFile, 'w');
  const child = spawn(process.execPath, [path.join(__dirname, '..', 'src', 'main.js')], {
    env: { ...process.env, HOST: '127.0.0.1', ADMIN_TOKEN: ADMIN, DATA_DIR: dataDir, ...NO_QUOTAS, ...env, PORT: String(port) },
    stdio: ['ignore', out, 'inherit'],
  });
  fs.closeSync(out);
  const url = `http://127.0.0.1:${port}`;
  for (const end = Date.now() + 30_000; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    try {
      if ((await fetch(`${url}/health`)).ok) return { url, child, dataDir };
    } catch {
      /* starting */
    }
  }
  child.kill('SIGKILL');
  throw new Error('the service did not start');
}

async function measure(logLevel: string): Promise<HttpFigures & { lines: number }> {
  const logFile = path.join(os.tmpdir(), `es-bench-log-${logLevel}.jsonl`);
  const { url, child, dataDir } = await start({ LOG_LEVEL: logLevel }, logFile);
  try {
    const t = (await (
      await fetch(`${url}/admin/tenants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: '{"name":"bench"}',
      })
    ).json()) as { apiKey: string };
    const headers = { 'x-api-key': t.apiKey };
    await hammer(`${url}/events`, headers, single, 2); // warm-up
    const figures = await hammer(`${url}/events`, headers, single, undefined, child.pid);
    return { ...figures, lines: fs.readFileSync(logFile, 'utf8').split('\n').length };
  } finally {
    await stopChild(child);
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(logFile, { force: true });
  }
}

async function main(): Promise<void> {
  const runs: Record<string, (HttpFigures & { lines: number })[]> = { info: [], warn: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const level of round % 2 === 0 ? ['info', 'warn'] : ['warn', 'info']) {
      const r = await measure(level);
      runs[level].push(r);
      console.log(
        `round ${round + 1} LOG_LEVEL=${level}: ${fmt(r.reqPerSec)} appends/s, ${fmt(r.serverCpuUs ?? 0)} µs CPU/append, p99 ${r.p99} ms, ${fmt(r.lines)} log lines`,
      );
    }
  }
  const summary = (level: string) => {
    const cpu = runs[level].map((r) => r.serverCpuUs ?? 0);
    const rps = runs[level].map((r) => r.reqPerSec);
    return {
      cpu: median(cpu),
      cpuMin: Math.min(...cpu),
      cpuMax: Math.max(...cpu),
      rps: median(rps),
      rpsMin: Math.min(...rps),
      rpsMax: Math.max(...rps),
    };
  };
  const [on, off] = [summary('info'), summary('warn')];
  for (const [label, s] of [
    ['request lines on (info)', on],
    ['request lines off (warn)', off],
  ] as const) {
    console.log(
      `${label}: median ${fmt(s.rps)} appends/s (${fmt(s.rpsMin)}–${fmt(s.rpsMax)}), ${fmt(s.cpu)} µs CPU/append (${fmt(s.cpuMin)}–${fmt(s.cpuMax)})`,
    );
  }
  // Rounds are pairs run back to back: on a machine whose load swings between rounds, the paired
  // differences say more than the difference of the medians.
  const paired = runs.info.map((r, i) => (r.serverCpuUs ?? 0) - (runs.warn[i].serverCpuUs ?? 0));
  console.log(
    `request line, paired by round: ${paired.map((d) => `${d >= 0 ? '+' : ''}${fmt(d)}`).join(', ')} µs CPU/append (median ${fmt(median(paired))})`,
  );
  console.log(
    `medians: ${fmt(((on.cpu - off.cpu) / off.cpu) * 100, 1)} % CPU per append, ${fmt(((off.rps - on.rps) / off.rps) * 100, 1)} % throughput`,
  );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
