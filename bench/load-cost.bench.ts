import * as path from 'node:path';
import { findRuntimeDll, HostLauncher } from '../src/tenant-code/host/host-launcher';
import { HostProcess } from '../src/tenant-code/host/host-process';
import { realPool, exampleSources } from '../test/support/runtime-harness';
import { fmt, median } from './bench-util';

/**
 * What a `load` costs in an executor (issue 22: type initialisers run at load and are charged to
 * the tenant): N loads of one upload under distinct ids, each unloaded, in one sandboxed executor
 * at a 256 MiB heap. `RUNTIME_DIR=<another build>/runtime/bin` times another host build (e.g. the
 * one before the change) with the same script. `LOADS` (default 200).
 */
const MB = 1024 * 1024;
const LOADS = Number(process.env.LOADS ?? 200);

/** A static table built through 2,000 string concatenations: what eager type initialisation moves from a first call to the load. */
const TABLE = `using EventSourcing; namespace T { public sealed class S { public int N { get; set; } }
public sealed class TReducer : IReducer<S> { static readonly string Table = Build();
static string Build() { var s = ""; for (var i = 0; i < 2000; i++) s += (char)('a' + i % 26); return s; }
public S Apply(S s, Event e) { s.N = Table.Length; return s; } } }`;

async function main(): Promise<void> {
  const dll = findRuntimeDll(process.env.RUNTIME_DIR);
  const { pool: compiler } = realPool();
  const launcher = new HostLauncher(dll, {
    exec: { gcHeapBytes: 256 * MB, dataBytes: 2048 * MB },
    compile: { gcHeapBytes: 1024 * MB, dataBytes: 5120 * MB },
  });
  const host = await HostProcess.start({
    mode: 'exec',
    label: 'bench',
    launch: launcher.launch('exec'),
    readyTimeoutMs: 30_000,
    maxLineBytes: 64 * MB,
  });
  console.log(`# load cost — ${new Date().toISOString()}, host ${path.dirname(dll)}, ${LOADS} loads each\n`);
  console.log('| upload | load median ms | p90 ms | charged bytes |');
  console.log('|---|---:|---:|---:|');
  try {
    for (const [name, files] of [
      ['bank-account', exampleSources('bank-account')],
      ['static table (2,000 concatenations)', [{ path: 'T.cs', content: TABLE }]],
    ] as const) {
      const compiled = await compiler.compile([...files]);
      if (!compiled.ok) throw new Error(compiled.compilationError);
      const load = (id: string) => host.call('load', { assemblyId: id, assembly: compiled.assembly, tenantId: id }, 30_000);
      for (let i = 0; i < 20; i++) {
        await load(`warm-${name}-${i}`);
        await host.call('unload', { assemblyId: `warm-${name}-${i}` }, 30_000);
      }
      const ms: number[] = [];
      let charged: number | undefined;
      for (let i = 0; i < LOADS; i++) {
        const t0 = performance.now();
        const r = await load(`${name}-${i}`);
        ms.push(performance.now() - t0);
        charged = r.chargedBytes;
        await host.call('unload', { assemblyId: `${name}-${i}` }, 30_000);
      }
      ms.sort((a, b) => a - b);
      console.log(`| ${name} | ${fmt(median(ms), 2)} | ${fmt(ms[Math.floor(ms.length * 0.9)], 2)} | ${charged ?? '—'} |`);
    }
  } finally {
    await host.close();
    await compiler.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
