import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { clientFor, ServiceProcess } from '../support/service-harness';
import { ThrowawayPostgres } from '../support/throwaway-postgres';
import { elapse } from '../support/wait';

// First run (README, docs/operations.md): `npm start` on an empty store, with neither ADMIN_TOKEN nor
// BOOTSTRAP_API_KEY, creates a tenant named `default`, prints its key once and a curl that works.

const cli = path.join(__dirname, '..', '..', 'dist', 'src', 'admin-cli.js');
const tenantNames = (dataDir: string, env: Record<string, string> = {}) =>
  execFileSync(process.execPath, [cli, 'list-tenants'], { env: { ...process.env, DATA_DIR: dataDir, ...env }, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split('\t')[1]);

const dirs: string[] = [];
const running: ServiceProcess[] = [];
let postgres: ThrowawayPostgres | undefined;
afterAll(async () => {
  for (const s of running) if (s.child.exitCode === null && s.child.signalCode === null) await s.kill('SIGTERM');
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  await postgres?.stop();
}, 60_000);

function emptyDataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-first-run-'));
  dirs.push(dir);
  return dir;
}

/** The service as `npm start` runs it: no ADMIN_TOKEN, info logs; started and past its "listening" line. */
async function start(dataDir: string, env: Record<string, string> = {}): Promise<ServiceProcess> {
  const s = new ServiceProcess({ DATA_DIR: dataDir, ADMIN_TOKEN: '', LOG_LEVEL: 'info', ...env });
  running.push(s);
  await s.start();
  // The notice, if any, is written right after this line.
  for (const end = Date.now() + 10_000; !s.stdout.includes('listening on') && Date.now() < end;)
    await elapse(50, 'poll interval: until the service listens');
  expect(s.stdout).toContain('listening on');
  await elapse(200, 'the notice, if any, is written right after the listening line');
  return s;
}

it('creates tenant default on an empty store, prints its key once with a curl that works, and nothing on a restart', async () => {
  const dataDir = emptyDataDir();
  const first = await start(dataDir);
  const key = /^ {2}(esk_\S+)$/m.exec(first.stdout)?.[1];
  expect(key).toBeDefined();
  expect(first.stdout).toMatch(/First run: created tenant 'default'/);
  // The printed command, run by a shell as a user would paste it (its port: the service's).
  const curl = first.stdout
    .split('\n')
    .find((l) => l.includes('curl') && l.includes('-X POST'))!
    .trim();
  expect(curl).toContain(`${first.url.replace('127.0.0.1', 'localhost')}/events`);
  const appended = JSON.parse(execFileSync('sh', ['-c', curl], { encoding: 'utf8' }));
  expect(appended).toMatchObject({ aggregateId: 'order-1', version: 1 });
  const client = clientFor(first.url, key!);
  expect((await client.get('/auth/whoami')).body).toMatchObject({ name: 'default' });
  expect((await client.get('/events/order-1')).body.events).toHaveLength(1);
  // The key appears once on stdout in all: the notice's commands aside, never in a log line.
  expect(first.stdout.split('\n').filter((l) => l.includes(key!) && !l.includes('curl'))).toEqual([`  ${key}`]);
  await first.kill('SIGTERM');

  const again = await start(dataDir);
  expect(again.stdout).not.toMatch(/First run|esk_/);
  expect((await clientFor(again.url, key!).get('/auth/whoami')).status).toBe(200);
  await again.kill('SIGTERM');
  expect(tenantNames(dataDir)).toEqual(['default']);
});

it('creates nothing and prints no key with FIRST_RUN_TENANT=false', async () => {
  const dataDir = emptyDataDir();
  const s = await start(dataDir, { FIRST_RUN_TENANT: 'false' });
  expect(s.stdout).not.toMatch(/First run|esk_/);
  await s.kill('SIGTERM');
  expect(tenantNames(dataDir)).toEqual([]);
});

it('creates nothing while ADMIN_TOKEN is set (tenants come from the admin API then)', async () => {
  const dataDir = emptyDataDir();
  const s = await start(dataDir, { ADMIN_TOKEN: 'an-admin-token-0123456789' });
  expect(s.stdout).not.toMatch(/First run|esk_/);
  await s.kill('SIGTERM');
  expect(tenantNames(dataDir)).toEqual([]);
});

it('creates one tenant and prints one key when two instances start together on one empty PostgreSQL database', async () => {
  postgres = await ThrowawayPostgres.start();
  const databaseUrl = await postgres.createDatabase('first_run');
  const [a, b] = await Promise.all([
    start(emptyDataDir(), { DATABASE_URL: databaseUrl }),
    start(emptyDataDir(), { DATABASE_URL: databaseUrl }),
  ]);
  const printed = [a, b].map((s) => /^ {2}(esk_\S+)$/m.exec(s.stdout)?.[1]).filter((k) => k !== undefined);
  expect(printed).toHaveLength(1);
  // Either instance accepts the key: one tenant, in the one store.
  for (const s of [a, b]) expect((await clientFor(s.url, printed[0]!).get('/auth/whoami')).body).toMatchObject({ name: 'default' });
  await Promise.all([a.kill('SIGTERM'), b.kill('SIGTERM')]);
  expect(tenantNames(emptyDataDir(), { DATABASE_URL: databaseUrl })).toEqual(['default']);
});
