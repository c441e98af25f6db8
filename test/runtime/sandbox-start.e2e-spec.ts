import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { exampleSources } from '../support/runtime-harness';
import { Client, newTenant, request, ServiceProcess } from '../support/service-harness';
import { zipSources } from '../support/zip-writer';
import { elapse, until } from '../support/wait';

/**
 * RUNTIME_SANDBOX at start, on the built service: strict (the default) refuses to start without a fence
 * (exit 2, naming it and what to install); weak starts without it, warns, and says so in GET /health/ready.
 * RUNTIME_SANDBOX_BWRAP pointed at a path that does not exist stands in for a machine without bubblewrap.
 */
jest.setTimeout(120_000);

const dirs: string[] = [];
const services: ServiceProcess[] = [];
afterAll(async () => {
  for (const s of services) if (s.child?.exitCode === null && s.child.signalCode === null) await s.kill('SIGTERM');
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function service(env: Record<string, string>): ServiceProcess {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-sandbox-start-'));
  dirs.push(dir);
  const s = new ServiceProcess({ DATA_DIR: dir, ...env });
  services.push(s);
  return s;
}

/** GET /health/ready once it answers 200 (the executors start after the HTTP port opens), or its last answer after 30 s. */
async function readyAnswer(url: string) {
  for (const end = Date.now() + 30_000; ; await elapse(100, 'poll interval')) {
    const r = await request(`${url}/health/ready`, 'GET');
    if (r.status === 200 || Date.now() > end) return r;
  }
}

async function reducerWorks(url: string, t: Client): Promise<void> {
  const form = new FormData();
  form.append('file', new Blob([zipSources(exampleSources('bank-account'))], { type: 'application/zip' }), 'reducer.zip');
  form.append('reducerId', 'bank');
  expect((await fetch(`${url}/reducers/upload`, { method: 'POST', headers: { 'x-api-key': t.key }, body: form })).status).toBe(202);
  await until(
    async () => (await t.get('/reducers/bank/status')).body.status,
    (s) => s !== 'pending_compilation',
    60_000,
    'the compile',
  );
  // The whole body on failure: a compile error says why.
  expect((await t.get('/reducers/bank/status')).body).toMatchObject({ status: 'compiled' });
  const res = await t.post('/events', { aggregateId: 'account-1', eventType: 'AccountOpened', data: { owner: 'ada' } });
  expect(res).toMatchObject({ status: 201, body: { state: { owner: 'ada', balance: 0 } } });
}

it('strict (default): starts with every fence and reports them on GET /health/ready, without a key', async () => {
  const s = service({});
  await s.start();
  const ready = await readyAnswer(s.url);
  expect(ready).toEqual({
    status: 200,
    body: {
      status: 'ready',
      sandbox: { mode: 'strict', fences: { namespaces: true, network: true, unprivilegedUser: true, seccomp: true, rlimits: true } },
      runtime: { isolation: 'shared', executors: 'started', count: expect.any(Number) },
      compiler: { running: expect.any(Number), of: 2 },
      store: { kind: 'sqlite', writable: true },
    },
  });
  // The contract's health check is untouched.
  expect(await request(`${s.url}/health`, 'GET')).toEqual({ status: 200, body: { status: 'ok' } });
  await s.kill('SIGTERM');
});

it('strict: refuses to start without bubblewrap, exit 2, naming the fence and what to install', async () => {
  const s = service({ RUNTIME_SANDBOX_BWRAP: '/nonexistent/bwrap' });
  await expect(s.start()).rejects.toThrow(/exited at start/);
  expect(await s.exited()).toBe(2);
  expect(s.output).toMatch(/refusing to start/);
  expect(s.output).toMatch(/namespaces: bubblewrap \(\/nonexistent\/bwrap\) is missing/);
  expect(s.output).toMatch(/apt-get install bubblewrap/);
  expect(s.output).toMatch(/RUNTIME_SANDBOX=weak/);
});

it('weak: starts without bubblewrap, warns naming the fence, says "weak" on /health/ready, and still runs reducers', async () => {
  // A cold compiler on a loaded machine can pass the default 15 s deadline; the deadline is not under test here.
  const s = service({ RUNTIME_SANDBOX: 'weak', RUNTIME_SANDBOX_BWRAP: '/nonexistent/bwrap', RUNTIME_COMPILE_DEADLINE_MS: '60000' });
  await s.start();
  expect(s.output).toMatch(/RUNTIME_SANDBOX=weak: runtime hosts run without the 'namespaces' fence/);
  const ready = await readyAnswer(s.url);
  expect(ready.status).toBe(200);
  expect(ready.body).toMatchObject({
    status: 'ready',
    sandbox: { mode: 'weak', fences: { namespaces: false, seccomp: true, rlimits: true } },
  });
  await reducerWorks(s.url, await newTenant(s.url, 'weak'));
  await s.kill('SIGTERM');
});

it('rejects a RUNTIME_SANDBOX that is neither strict nor weak, with the other configuration errors (exit 2)', async () => {
  const s = service({ RUNTIME_SANDBOX: 'off' });
  await expect(s.start()).rejects.toThrow(/exited at start/);
  expect(await s.exited()).toBe(2);
  expect(s.output).toMatch(/RUNTIME_SANDBOX must be strict or weak/);
});
