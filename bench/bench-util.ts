import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { ChildProcess, spawn } from 'node:child_process';
import * as http from 'node:http';
import * as path from 'node:path';
import { freePort } from '../test/support/free-port';
import { descendants } from '../test/support/host-processes';

export interface HttpFigures {
  reqPerSec: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** Requests answered in the run. */
  total: number;
  /** CPU the server process spent per request, in µs (when its pid was given): steadier than throughput on a shared machine. */
  serverCpuUs?: number;
}

/** user + system CPU of a process so far, in ms (Linux /proc; 10 ms resolution). */
export function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

/** CPU (ms) of a process and every process below it (the service's executors and compilers) so far. */
export function treeCpuMs(pid: number): number {
  let ms = 0;
  for (const p of [pid, ...descendants(pid)]) {
    try {
      ms += cpuMsOf(p);
    } catch {
      /* gone */
    }
  }
  return ms;
}

export const DURATION_S = Number(process.env.BENCH_SECONDS ?? 10);
export const CONNECTIONS = 32;

/** autocannon against one URL, a fresh body per request (bodies differ so ids do). */
/** The figures every HTTP bench reports from an autocannon result. */
export function httpFigures(result: autocannon.Result): HttpFigures {
  return {
    reqPerSec: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    total: result.requests.total,
  };
}

export async function hammer(
  url: string,
  headers: Record<string, string>,
  /** A value to JSON.stringify, or the body's exact text (numbers a double would change). */
  body: (i: number) => unknown,
  duration = DURATION_S,
  serverPid?: number,
): Promise<HttpFigures> {
  let i = 0;
  const cpuBefore = serverPid ? cpuMsOf(serverPid) : 0;
  const result = await autocannon({
    url,
    method: 'POST',
    connections: CONNECTIONS,
    duration,
    headers: { 'content-type': 'application/json', ...headers },
    requests: [
      {
        setupRequest: (req: any) => {
          const b = body(i++);
          req.body = typeof b === 'string' ? b : JSON.stringify(b);
          return req;
        },
      },
    ],
  } as autocannon.Options);
  return {
    ...httpFigures(result),
    ...(serverPid ? { serverCpuUs: ((cpuMsOf(serverPid) - cpuBefore) * 1000) / Math.max(1, result.requests.total) } : {}),
  };
}

/**
 * Every per-tenant quota off: the benchmarks measure what the machine does for one tenant, which
 * the default quotas (a fifth of an instance) would cap. quotas.bench.ts sets its own.
 */
export const NO_QUOTAS: Record<string, string> = {
  QUOTA_APPEND_REQUESTS: '0',
  QUOTA_APPEND_EVENTS: '0',
  QUOTA_UPLOADS: '0',
  QUOTA_STREAMS: '0',
  QUOTA_WEBHOOKS_IN_FLIGHT: '0',
};

/** A child process that answers HTTP (/health on the service; bare Fastify answers 404 there). Quotas are off unless `env` sets them. */
export async function startChild(
  script: string,
  env: Record<string, string>,
  /** Node options for the child (e.g. --cpu-prof, which NODE_OPTIONS refuses). */
  nodeArgs: string[] = [],
): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  // A relative script is this checkout's build; an absolute one may be another checkout's (a baseline).
  const child = spawn(process.execPath, [...nodeArgs, path.isAbsolute(script) ? script : path.join(__dirname, '..', script)], {
    env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...NO_QUOTAS, ...env, PORT: String(port) },
    // Inherited, not piped: an unread pipe fills up and then blocks the service's log writes.
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${url}/health`);
      if (res.status < 500) return { url, child };
    } catch {
      /* starting */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`${script} did not start`);
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const done = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await done;
}

/** Appends (MoneyDeposited) spread round robin over `keys`, each request to the next tenant, to the aggregate `aggregateId(n)`. */
export async function roundRobinAppends(
  url: string,
  keys: string[],
  seconds: number,
  aggregateId: (n: number) => string,
): Promise<autocannon.Result> {
  let i = 0;
  return autocannon({
    url: `${url}/events`,
    method: 'POST',
    connections: CONNECTIONS,
    duration: seconds,
    headers: { 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (req: any) => {
          const n = i++;
          req.headers = { ...req.headers, 'x-api-key': keys[n % keys.length] };
          req.body = JSON.stringify({ aggregateId: aggregateId(n), eventType: 'MoneyDeposited', data: { amount: 1 } });
          return req;
        },
      },
    ],
  } as autocannon.Options);
}

/** Runs `fn` from `workers` concurrent loops for `seconds`; returns completions per second. */
export async function closedLoop(workers: number, seconds: number, fn: (worker: number, i: number) => Promise<unknown>): Promise<number> {
  const end = Date.now() + seconds * 1000;
  let done = 0;
  const start = Date.now();
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (let i = 0; Date.now() < end; i++) {
        await fn(w, i);
        done++;
      }
    }),
  );
  return done / ((Date.now() - start) / 1000);
}

export const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

// A bounded keep-alive pool: an open-loop load must not turn into thousands of new connections.
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/** One request with an API key; the body is parsed when it is JSON, else kept as text. */
export function call(url: string, method: string, key: string, body?: unknown): Promise<{ status: number; body: any }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method, agent, headers: { 'x-api-key': key, ...(payload ? { 'content-type': 'application/json' } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text || 'null');
          } catch {
            /* not JSON */
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** The p-th percentile of `xs` (NaN when empty). */
export const pct = (xs: number[], p: number): number =>
  xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] : NaN;

/** The median of `xs`. */
export const median = (xs: number[]): number => pct(xs, 50);

/** A built checkout whose service a benchmark starts. */
export interface Checkout {
  label: string;
  dir: string;
}

/**
 * This checkout and, with BENCH_SERVICE_DIR (another built checkout: the code before a change),
 * that one first, measured in the same run.
 */
export function checkoutsUnderTest(): Checkout[] {
  const checkouts: Checkout[] = [{ label: 'this', dir: path.resolve(__dirname, '..', '..') }];
  if (process.env.BENCH_SERVICE_DIR) checkouts.unshift({ label: 'base', dir: path.resolve(process.env.BENCH_SERVICE_DIR) });
  return checkouts;
}

/** The admin token the benchmarks give the services they start. */
export const BENCH_ADMIN_TOKEN = 'bench-admin-token-0123456789';

/** A POST of the admin API (tenants, limits); throws on anything but 2xx. */
export async function adminPost(url: string, p: string, body: unknown): Promise<any> {
  const r = await fetch(`${url}${p}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (r.status >= 300) throw new Error(`${p}: ${r.status} ${await r.text()}`);
  return r.json();
}
