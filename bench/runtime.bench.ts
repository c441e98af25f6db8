import * as os from 'node:os';
import { RawJson } from '../src/common/raw-json';
import { findRuntimeDll, HostLauncher } from '../src/tenant-code/host/host-launcher';
import { HostProcess } from '../src/tenant-code/host/host-process';
import { RuntimePool } from '../src/tenant-code/runtime-pool';
import { DEFAULT_POOL_OPTIONS } from '../src/tenant-code/runtime-pool-options';
import { exampleSources, wireEvent } from '../test/support/runtime-harness';
import { fmt, median } from './bench-util';

const MB = 1024 * 1024;

async function coldStart(launcher: HostLauncher): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    const h = await HostProcess.start({
      mode: 'exec',
      label: 'bench',
      launch: launcher.launch('exec'),
      readyTimeoutMs: 30_000,
      maxLineBytes: 64 * MB,
    });
    times.push(performance.now() - t0);
    await h.close();
  }
  return median(times);
}

async function main(): Promise<void> {
  console.log(`# runtime benchmark — ${new Date().toISOString()}, ${os.cpus().length} cores, node ${process.version}\n`);
  const launcher = new HostLauncher(findRuntimeDll(), {
    exec: { gcHeapBytes: 512 * MB, dataBytes: 3 * 1024 * MB },
    compile: { gcHeapBytes: 1024 * MB, dataBytes: 5 * 1024 * MB },
  });
  const assemblies = new Map<string, Buffer>();
  const pool = new RuntimePool(launcher, async (_t, id) => assemblies.get(id)!, { ...DEFAULT_POOL_OPTIONS, callDeadlineMs: 60_000 });

  const start = await coldStart(launcher);
  console.log(`cold start of an executor host to ready: ${fmt(start)} ms (median of 5)`);

  console.log('\n| example | first compile in a fresh compiler (cold) ms | warm compile ms (median of 5) |');
  console.log('|---|---:|---:|');
  for (const name of ['bank-account', 'orders', 'customer-totals']) {
    const files = exampleSources(name);
    const t0 = performance.now();
    const first = await pool.compile(files);
    const cold = performance.now() - t0;
    if (!first.ok) throw new Error(first.compilationError);
    assemblies.set(name, Buffer.from(first.assembly, 'base64'));
    const warm: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      await pool.compile(files);
      warm.push(performance.now() - t);
    }
    console.log(`| ${name} | ${fmt(cold)} | ${fmt(median(warm))} |`);
  }

  console.log('\n| Apply batch (events per call) | calls in flight | events/s through the bridge | p50 call ms |');
  console.log('|---:|---:|---:|---:|');
  const cls = 'BankAccount.AccountReducer';
  await pool.apply('bench', 'bank-account', cls, [{ state: null, events: [wireEvent('account-1', 'AccountOpened', { owner: 'x' }, 1)] }]);
  for (const batch of [1, 10, 100]) {
    const events = Array.from({ length: batch }, (_, i) => wireEvent('account-1', 'MoneyDeposited', { amount: 1 }, i + 2));
    const inflight = 4;
    const lat: number[] = [];
    let done = 0;
    const end = Date.now() + 4000;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: inflight }, async () => {
        while (Date.now() < end) {
          const t = performance.now();
          const [r] = await pool.apply('bench', 'bank-account', cls, [
            { state: new RawJson('{"owner":"x","balance":0,"transactions":0}'), events },
          ]);
          if (!r.ok) throw new Error(r.error.message);
          lat.push(performance.now() - t);
          done += batch;
        }
      }),
    );
    const rate = done / ((performance.now() - t0) / 1000);
    console.log(`| ${batch} | ${inflight} | ${fmt(rate)} | ${fmt(median(lat), 2)} |`);
  }

  // Memory with 100 loaded uploads in one executor, and after unloading them.
  for (let i = 0; i < 100; i++) assemblies.set(`upload-${i}`, assemblies.get('bank-account')!);
  const base = await pool.executorStats('mem');
  for (let i = 0; i < 100; i++) {
    await pool.apply('mem', `upload-${i}`, cls, [{ state: null, events: [wireEvent('account-1', 'AccountOpened', { owner: 'x' }, 1)] }]);
  }
  const loaded = (await pool.executorStats('mem'))!;
  for (let i = 0; i < 100; i++) await pool.unload('mem', `upload-${i}`);
  const after = (await pool.executorStats('mem'))!;
  const mb = (n: unknown) => fmt(Number(n) / MB, 1);
  console.log('\n| executor memory | loaded uploads | GC heap MiB | working set MiB |');
  console.log('|---|---:|---:|---:|');
  if (base) console.log(`| before | ${base.loadedAssemblies} | ${mb(base.gcHeapBytes)} | ${mb(base.workingSetBytes)} |`);
  console.log(
    `| 100 uploads loaded and run once | ${loaded.loadedAssemblies} | ${mb(loaded.gcHeapBytes)} | ${mb(loaded.workingSetBytes)} |`,
  );
  console.log(`| after unloading them (full GC) | ${after.loadedAssemblies} | ${mb(after.gcHeapBytes)} | ${mb(after.workingSetBytes)} |`);
  await pool.close();
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
