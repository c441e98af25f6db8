import { RawJson, stringifyJson } from '../../src/common/raw-json';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { findRuntimeDll, HostLauncher } from '../../src/tenant-code/host/host-launcher';
import { RuntimePool } from '../../src/tenant-code/runtime-pool';
import { DEFAULT_POOL_OPTIONS, RuntimePoolOptions } from '../../src/tenant-code/runtime-pool-options';
import { WireEvent } from '../../src/tenant-code/host/runtime-protocol';

/** The repository root, from the sources (ts-jest) or from dist/ (benchmarks). */
export const REPO = (() => {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'runtime', 'protocol.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error('repository root not found');
    dir = up;
  }
  return dir;
})();

/** Source files of an example folder (examples/<name>) as the archive reader would hand them on. */
export function exampleSources(name: string): { path: string; content: string }[] {
  const dir = path.join(REPO, 'examples', name);
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.cs'))
    .sort()
    .map((f) => ({ path: f, content: fs.readFileSync(path.join(dir, f), 'utf8') }));
}

/**
 * A pool over the real built host (runtime/bin); compiled assemblies are kept in memory here
 * (`assemblies`, keyed tenant/assemblyId), unless `source` gives them.
 */
export function realPool(options: Partial<RuntimePoolOptions> = {}, source?: (tenantId: string, assemblyId: string) => Buffer | undefined) {
  const assemblies = new Map<string, Buffer>();
  const launcher = new HostLauncher(findRuntimeDll(), {
    exec: { gcHeapBytes: 256 * 1024 * 1024, dataBytes: 2 * 1024 * 1024 * 1024 },
    compile: { gcHeapBytes: 1024 * 1024 * 1024, dataBytes: 5 * 1024 * 1024 * 1024 },
  });
  const pool = new RuntimePool(
    launcher,
    async (tenantId, assemblyId) => {
      const bytes = source ? source(tenantId, assemblyId) : assemblies.get(`${tenantId}/${assemblyId}`);
      if (!bytes) throw new Error(`no assembly ${assemblyId} for ${tenantId}`);
      return bytes;
    },
    { ...DEFAULT_POOL_OPTIONS, ...options },
  );
  return { pool, launcher, assemblies };
}

let seq = 0;
export function wireEvent(aggregateId: string, eventType: string, data: unknown, version = ++seq): WireEvent {
  return {
    eventId: `00000000-0000-7000-8000-${String(version).padStart(12, '0')}`,
    aggregateId,
    aggregateType: aggregateId.split('-')[0],
    eventType,
    version,
    timestamp: new Date(1_700_000_000_000 + version).toISOString(),
    data: new RawJson(stringifyJson(data)),
    metadata: null,
    correlationId: null,
    causationId: null,
  };
}
