import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PostgresStore } from '../../src/store/postgres/postgres-store';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store';
import { TenantDirectory } from '../../src/tenancy/tenant-directory';
import { ThrowawayPostgres } from '../support/throwaway-postgres';

// First run (src/tenancy/first-run.ts): instances starting together on one empty store create one
// tenant between them. The check "no tenant yet" and the creation are one transaction, serialised
// across processes (SQLite: the write lock taken first; PostgreSQL: an advisory transaction lock).

const INSTANCES = 4;
let postgres: ThrowawayPostgres | undefined;

afterAll(async () => {
  await postgres?.stop();
}, 60_000);

/** One process per instance, each creating at the same instant; what each says. */
function raceProcesses(dataDir: string): Promise<string[]> {
  const dist = path.join(__dirname, '..', '..', 'dist', 'src');
  if (!fs.existsSync(path.join(dist, 'store', 'sqlite', 'sqlite-store.js')))
    throw new Error(`${dist} missing: run 'npm run build' (npm test does)`);
  const at = Date.now() + 1_500;
  const script = `
    const { SqliteStore } = require(${JSON.stringify(path.join(dist, 'store', 'sqlite', 'sqlite-store.js'))});
    const { TenantDirectory } = require(${JSON.stringify(path.join(dist, 'tenancy', 'tenant-directory.js'))});
    (async () => {
      const store = SqliteStore.inDataDir(${JSON.stringify(dataDir)});
      await store.migrate();
      while (Date.now() < ${at}) {}
      const made = await new TenantDirectory(store.tenants, 0).createFirstTenant('default');
      process.stdout.write(made ? 'created' : 'none');
      await store.close();
    })().catch((e) => { console.error(e); process.exit(1); });`;
  return Promise.all(
    Array.from({ length: INSTANCES }, () => {
      const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      return new Promise<string>((resolve) => child.on('exit', () => resolve(out)));
    }),
  );
}

it('SQLite: processes sharing one empty data file create one tenant between them', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-first-'));
  try {
    // Migrated once first: the race under test is the tenant's, not the schema's.
    const store = SqliteStore.inDataDir(dataDir);
    await store.migrate();
    await store.close();
    const said = await raceProcesses(dataDir);
    expect(said.sort()).toEqual(['created', ...Array(INSTANCES - 1).fill('none')]);
    const check = SqliteStore.inDataDir(dataDir);
    await check.migrate();
    expect((await check.tenants.listTenants()).map((t) => t.name)).toEqual(['default']);
    await check.close();
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

it('PostgreSQL: instances on one empty database create one tenant between them', async () => {
  postgres = await ThrowawayPostgres.start();
  const url = await postgres.createDatabase('first');
  const stores = Array.from({ length: INSTANCES }, () => new PostgresStore({ connectionString: url }));
  try {
    await stores[0].migrate();
    const made = await Promise.all(stores.map((s) => new TenantDirectory(s.tenants, 0).createFirstTenant('default')));
    expect(made.filter((m) => m !== null)).toHaveLength(1);
    expect((await stores[0].tenants.listTenants()).map((t) => t.name)).toEqual(['default']);
    // And never again on that store.
    expect(await new TenantDirectory(stores[1].tenants, 0).createFirstTenant('default')).toBeNull();
  } finally {
    await Promise.all(stores.map((s) => s.close()));
  }
});
