import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { findRuntimeDll, HostLauncher } from '../src/tenant-code/host/host-launcher';
import { HostCallError } from '../src/tenant-code/host/host-process';
import { RuntimePool } from '../src/tenant-code/runtime-pool';
import { DEFAULT_POOL_OPTIONS } from '../src/tenant-code/runtime-pool-options';
import { DEFAULT_SANDBOX } from '../src/tenant-code/host/sandbox';
import { deepNegations, deepParentheses, pathologicalFixtures, PathologicalSource } from '../test/support/pathological-sources';
import { exampleSources, REPO } from '../test/support/runtime-harness';
import { zipSources } from '../test/support/zip-writer';
import { fmt, median, startChild, stopChild } from './bench-util';

/**
 * Compiles that cannot hold others up (issue 10, item 3):
 *  1. what ordinary sources take to compile, cold and warm (the examples, the escape corpus): the deadline's basis;
 *  2. what each pathological source takes, on a compiler host with a long deadline;
 *  3. tenant B's ordinary compile while tenant A's pathological uploads are queued, over HTTP, several runs.
 *
 * BENCH_SERVICE_DIR points at another checkout (built: dist/ and runtime/bin) to measure it instead,
 * e.g. the code before this change; BENCH_RUNS (default 3) the runs of part 3; BENCH_PARTS (default
 * "1,2,3") which parts run; BENCH_DEADLINE_MS the deadline of part 2 (default: the pool's default deadline).
 */

const ADMIN = 'bench-admin-token-0123456789';
const MB = 1024 * 1024;
const serviceDir = path.resolve(process.env.BENCH_SERVICE_DIR ?? REPO);
const runs = Number(process.env.BENCH_RUNS ?? 3);
const parts = new Set((process.env.BENCH_PARTS ?? '1,2,3').split(','));
const spread = (xs: number[]) => `${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function poolOn(compileDeadlineMs: number, compilerHosts = 1): RuntimePool {
  // The compiler's limits as the service sets them (RUNTIME_COMPILE_HEAP_MB 1024: RLIMIT_DATA 4× + 1 GiB). A build
  // from before the sandbox (BENCH_SERVICE_DIR) installs no seccomp filter: it runs in weak mode.
  const launcher = new HostLauncher(findRuntimeDll(path.join(serviceDir, 'runtime', 'bin')), {
    exec: { gcHeapBytes: 256 * MB, dataBytes: 2 * 1024 * MB },
    compile: { gcHeapBytes: 1024 * MB, dataBytes: 5 * 1024 * MB },
    sandbox: { ...DEFAULT_SANDBOX, mode: serviceDir === REPO ? 'strict' : 'weak' },
  });
  return new RuntimePool(launcher, async () => Buffer.alloc(0), { ...DEFAULT_POOL_OPTIONS, compileDeadlineMs, compilerHosts });
}

async function timeCompile(pool: RuntimePool, files: { path: string; content: string }[]): Promise<{ ms: number; outcome: string }> {
  const t0 = performance.now();
  const outcome = await pool.compile(files).then(
    (r) =>
      r.ok
        ? 'compiled'
        : `error: ${r.compilationError
            .split('\n')
            .slice(-1)[0]
            .replace(/^.*?error /, '')
            .slice(0, 90)}`,
    (e: HostCallError) => `${e.failure}: ${e.message.slice(0, 90)}`,
  );
  return { ms: performance.now() - t0, outcome: outcome.replace(/\|/g, '/') };
}

async function ordinaryCompiles(): Promise<void> {
  console.log('## 1. Ordinary sources (the deadline’s basis)\n');
  console.log('| source | cold: first compile in a fresh compiler, ms (median of 3 processes) | warm ms (median of 5) |');
  console.log('|---|---:|---:|');
  for (const name of ['bank-account', 'orders', 'customer-totals']) {
    const files = exampleSources(name);
    const cold: number[] = [];
    for (let i = 0; i < 3; i++) {
      const pool = poolOn(60_000);
      cold.push((await timeCompile(pool, files)).ms);
      await pool.close();
    }
    const pool = poolOn(60_000);
    await timeCompile(pool, files);
    const warm: number[] = [];
    for (let i = 0; i < 5; i++) warm.push((await timeCompile(pool, files)).ms);
    await pool.close();
    console.log(`| examples/${name} | ${fmt(median(cold))} (${spread(cold)}) | ${fmt(median(warm))} (${spread(warm)}) |`);
  }
  const dir = path.join(REPO, 'runtime', 'escape-corpus');
  const corpus = fs.readdirSync(dir).filter((f) => f.endsWith('.cs'));
  const pool = poolOn(60_000);
  await timeCompile(pool, exampleSources('bank-account'));
  const times: number[] = [];
  for (const f of corpus) times.push((await timeCompile(pool, [{ path: f, content: fs.readFileSync(path.join(dir, f), 'utf8') }])).ms);
  await pool.close();
  console.log(
    `| runtime/escape-corpus (${corpus.length} files, warm, each) | | median ${fmt(median(times))}, max ${fmt(Math.max(...times))} |`,
  );
  console.log();
}

function hostileSet(): PathologicalSource[] {
  const padded = (s: PathologicalSource) => ({
    ...s,
    files: s.files.map((f) => ({ ...f, content: `${f.content}\n// ${randomBytes(4096).toString('base64')}\n` })),
  });
  return [...pathologicalFixtures(), padded(deepParentheses(100_000))];
}

async function pathologicalCompiles(): Promise<void> {
  const deadline = Number(process.env.BENCH_DEADLINE_MS ?? DEFAULT_POOL_OPTIONS.compileDeadlineMs);
  console.log(`## 2. Pathological sources, each on a fresh compiler host, deadline ${deadline} ms (${serviceDir})\n`);
  console.log('| source | bytes | ms | outcome |');
  console.log('|---|---:|---:|---|');
  for (const s of [...hostileSet(), deepNegations(100_000)]) {
    const pool = poolOn(deadline);
    await timeCompile(pool, exampleSources('customer-totals')); // warm
    const r = await timeCompile(pool, s.files);
    await pool.close();
    console.log(`| ${s.name} | ${fmt(s.files.reduce((n, f) => n + Buffer.byteLength(f.content), 0))} | ${fmt(r.ms)} | ${r.outcome} |`);
  }
  console.log();
}

async function tenant(url: string, name: string): Promise<string> {
  const r = await fetch(`${url}/admin/tenants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  return ((await r.json()) as { apiKey: string }).apiKey;
}

async function upload(url: string, key: string, files: { path: string; content: string }[], reducerId: string): Promise<number> {
  const form = new FormData();
  form.append('file', new Blob([zipSources(files)]), 'archive.zip');
  form.append('reducerId', reducerId);
  return (await fetch(`${url}/reducers/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form })).status;
}

async function status(url: string, key: string, id: string): Promise<any> {
  return (await fetch(`${url}/reducers/${id}/status`, { headers: { 'x-api-key': key } })).json();
}

async function fairnessRun(env: Record<string, string>, withHostile: boolean): Promise<{ bMs: number; aMs: number; aOutcomes: string[] }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-bench-cf-'));
  const main = path.relative(path.join(__dirname, '..'), path.join(serviceDir, 'dist', 'src', 'main.js'));
  const { url, child } = await startChild(main, { ADMIN_TOKEN: ADMIN, DATA_DIR: dataDir, LOG_LEVEL: 'error', ...env });
  try {
    const a = await tenant(url, 'hostile');
    const b = await tenant(url, 'ordinary');
    await sleep(3000); // compilers started and warmed (where the service starts them at start)
    const hostile = withHostile ? hostileSet() : [];
    const aStart = Date.now();
    for (const [i, h] of hostile.entries()) await upload(url, a, h.files, `a-${i}`);
    const t0 = Date.now();
    await upload(url, b, exampleSources('bank-account'), 'b-bank');
    let bMs = NaN;
    for (;;) {
      const st = await status(url, b, 'b-bank');
      if (st.status !== 'pending_compilation') {
        bMs = Date.now() - t0;
        if (st.status !== 'compiled') throw new Error(`B's compile ${st.status}: ${st.compilationError}`);
        break;
      }
      await sleep(20);
    }
    const aOutcomes: string[] = [];
    for (const [i] of hostile.entries()) {
      for (;;) {
        const st = await status(url, a, `a-${i}`);
        if (st.status !== 'pending_compilation') {
          aOutcomes.push(
            `${hostile[i].name}: ${st.status} (${String(st.compilationError ?? '')
              .split('\n')
              .slice(-1)[0]
              .slice(0, 70)})`,
          );
          break;
        }
        await sleep(200);
      }
    }
    return { bMs, aMs: Date.now() - aStart, aOutcomes };
  } finally {
    await stopChild(child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function fairness(): Promise<void> {
  console.log(
    `## 3. Tenant B's ordinary compile (examples/bank-account) while tenant A's ${hostileSet().length} pathological uploads are queued (${serviceDir})\n`,
  );
  const env: Record<string, string> = {};
  for (const k of ['RUNTIME_COMPILE_DEADLINE_MS', 'RUNTIME_COMPILER_HOSTS', 'UPLOAD_PENDING_MAX_PER_TENANT'])
    if (process.env[k]) env[k] = process.env[k]!;
  console.log(`configuration: ${JSON.stringify(env)} (unset: the service's defaults)\n`);
  const alone = await fairnessRun(env, false);
  console.log(`B alone: ${fmt(alone.bMs)} ms\n`);
  console.log("| run | B upload → compiled, ms | A's uploads all finished after, s |");
  console.log('|---:|---:|---:|');
  const bs: number[] = [];
  let outcomes: string[] = [];
  for (let i = 1; i <= runs; i++) {
    const r = await fairnessRun(env, true);
    bs.push(r.bMs);
    outcomes = r.aOutcomes;
    console.log(`| ${i} | ${fmt(r.bMs)} | ${fmt(r.aMs / 1000, 1)} |`);
  }
  console.log(`\nB: median ${fmt(median(bs))} ms, ${spread(bs)} over ${runs} runs. A's uploads ended (last run):\n`);
  for (const o of outcomes) console.log(`- ${o}`);
  console.log();
}

async function main(): Promise<void> {
  console.log(
    `# compile fairness benchmark — ${new Date().toISOString()}, ${os.cpus().length} cores, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}, node ${process.version}\n`,
  );
  if (parts.has('1')) await ordinaryCompiles();
  if (parts.has('2')) await pathologicalCompiles();
  if (parts.has('3')) await fairness();
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
