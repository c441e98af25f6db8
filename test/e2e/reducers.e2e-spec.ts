import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, newTenant, request, RunningService, ServiceProcess, startService, clientFor } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { exampleSources } from '../support/runtime-harness';
import { zipSources } from '../support/zip-writer';
import { elapse, until } from '../support/wait';

jest.setTimeout(120_000);
afterAll(() => stopBackends(), 60_000);

const bankZip = () => zipSources(exampleSources('bank-account'));

/** The bank account reducer with withdrawals clamped instead of refused: the "fixed" version. */
const fixedBankZip = () =>
  zipSources(
    exampleSources('bank-account').map((f) => ({
      path: f.path,
      content: f.content.replace(/throw new InvalidOperationException\([\s\S]*?\);/, 'amount = state.Balance;'),
    })),
  );

async function upload(client: Client, url: string, zip: Buffer, reducerId?: string) {
  const form = new FormData();
  form.append('file', new Blob([zip], { type: 'application/zip' }), 'reducer.zip');
  if (reducerId) form.append('reducerId', reducerId);
  const res = await fetch(`${url}/reducers/upload`, { method: 'POST', headers: { 'x-api-key': client.key }, body: form });
  return { status: res.status, body: (await res.json()) as any };
}

async function compiled(client: Client, reducerId: string) {
  for (let i = 0; i < 600; i++) {
    const res = await client.get(`/reducers/${reducerId}/status`);
    if (res.body.status !== 'pending_compilation') return res;
    await elapse(100, 'poll interval');
  }
  throw new Error('compile did not finish');
}

describe.each(STORE_BACKENDS)('reducers over HTTP on %s', (backend) => {
  let svc: RunningService;
  let t: Client;

  beforeAll(async () => {
    svc = await startService(await envFor(backend));
    t = await newTenant(svc.url, 'reducers');
  }, 120_000);
  afterAll(() => svc?.close());

  it('uploads the bank-account example, compiles it, binds it and returns the state on every append', async () => {
    const up = await upload(t, svc.url, bankZip(), 'bank-v1');
    expect(up).toEqual({ status: 202, body: { reducerId: 'bank-v1', status: 'pending_compilation' } });
    const st = await compiled(t, 'bank-v1');
    expect(st.body).toEqual({
      id: 'bank-v1',
      reducerId: 'bank-v1',
      status: 'compiled',
      kind: 'reducer',
      discovered: [
        {
          className: 'BankAccount.AccountReducer',
          stateTypeName: expect.stringContaining('AccountState'),
          kind: 'reducer',
          aggregateType: 'account',
        },
      ],
      compiledClassName: 'BankAccount.AccountReducer',
      compiledStateType: expect.stringContaining('AccountState'),
      diagnostics: [],
      createdAt: expect.stringMatching(/Z$/),
      compiledAt: expect.stringMatching(/Z$/),
    });
    // The compile is recorded, then handed to autoBind: the binding follows the `compiled` status by a moment.
    const binding = await until(
      () => t.get('/aggregate-types/account'),
      (r) => r.status === 200,
      30_000,
      'the auto-bind after the compile',
    );
    expect(binding.body).toMatchObject({ aggregateType: 'account', reducerId: 'bank-v1', boundAt: expect.stringMatching(/Z$/) });

    const opened = await t.post('/events', { aggregateId: 'account-1', eventType: 'AccountOpened', data: { owner: 'ada' } });
    expect(opened.status).toBe(201);
    expect(opened.body.state).toEqual({ owner: 'ada', balance: 0, transactions: 0 });
    const dep = await t.post('/events', { aggregateId: 'account-1', eventType: 'MoneyDeposited', data: { amount: 100 } });
    expect(dep.body.state).toMatchObject({ balance: 100, transactions: 1 });
    const batch = await t.post('/events/batch', {
      aggregateId: 'account-1',
      events: [
        { eventType: 'MoneyDeposited', data: { amount: 50 } },
        { eventType: 'MoneyWithdrawn', data: { amount: 30 } },
      ],
    });
    expect(batch.status).toBe(201);
    expect(batch.body).toMatchObject({ startVersion: 3, endVersion: 4, state: { balance: 120, transactions: 3 } });

    const read = await t.get('/aggregate-types/account/account-1/state');
    expect(read).toEqual({
      status: 200,
      body: {
        aggregateId: 'account-1',
        aggregateType: 'account',
        version: 4,
        state: { owner: 'ada', balance: 120, transactions: 3 },
        lastModified: expect.stringMatching(/Z$/),
      },
    });
  });

  it('keeps state correct for concurrent appends to one aggregate', async () => {
    await t.post('/events', { aggregateId: 'account-c', eventType: 'AccountOpened', data: { owner: 'c' } });
    const results = await Promise.all(
      Array.from({ length: 20 }, () => t.post('/events', { aggregateId: 'account-c', eventType: 'MoneyDeposited', data: { amount: 1 } })),
    );
    expect(results.every((r) => r.status === 201)).toBe(true);
    const byVersion = new Map(results.map((r) => [r.body.version, r.body.state.balance]));
    for (let v = 2; v <= 21; v++) expect(byVersion.get(v)).toBe(v - 1);
    expect((await t.get('/aggregate-types/account/account-c/state')).body.state.balance).toBe(20);
  });

  it('refuses an event its reducer throws on (nothing stored), and recomputes every aggregate when another reducer is bound', async () => {
    await t.post('/events', { aggregateId: 'account-2', eventType: 'AccountOpened', data: { owner: 'bo' } });
    // The overdraft guard (README "Reducers guard invariants"; test/e2e/reducer-rejected.e2e-spec.ts has the rest).
    const bad = await t.post('/events', { aggregateId: 'account-2', eventType: 'MoneyWithdrawn', data: { amount: 500 } });
    expect(bad).toMatchObject({ status: 422, body: { error: 'REDUCER_REJECTED', exceptionType: 'System.InvalidOperationException' } });
    const after = await t.post('/events', { aggregateId: 'account-2', eventType: 'MoneyDeposited', data: { amount: 5 } });
    expect(after).toMatchObject({ status: 201, body: { version: 2, state: { balance: 5 } } });
    expect((await t.get('/events/account-2')).body.events).toHaveLength(2);

    await upload(t, svc.url, fixedBankZip(), 'bank-v2');
    expect((await compiled(t, 'bank-v2')).body.status).toBe('compiled');
    // Compiling auto-binds; an explicit PUT in the earlier shape (reducerId only) works too.
    const put = await request(`${svc.url}/aggregate-types/account`, 'PUT', { reducerId: 'bank-v2' }, { 'x-api-key': t.key });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      aggregateType: 'account',
      reducerId: 'bank-v2',
      boundAt: expect.any(String),
      message: expect.stringMatching(/catch-up/),
    });
    // The bind starts a background catch-up over every aggregate of the type; its progress is visible.
    let binding: any;
    for (let i = 0; i < 100; i++) {
      binding = (await t.get('/aggregate-types/account')).body;
      if (binding.catchUp?.status === 'done') break;
      await elapse(50, 'poll interval: until the catch-up is done');
    }
    expect(binding).toMatchObject({ reducerId: 'bank-v2', catchUp: { status: 'done' } });
    expect(binding.catchUp.aggregates).toBeGreaterThanOrEqual(3);
    const fixed = await t.get('/aggregate-types/account/account-2/state');
    expect(fixed).toMatchObject({ status: 200, body: { version: 2, state: { owner: 'bo', balance: 5, transactions: 1 } } });
    // And the earlier aggregate is recomputed under the new binding, not served from the old one.
    expect((await t.get('/aggregate-types/account/account-1/state')).body).toMatchObject({ version: 4, state: { balance: 120 } });
  });

  it('answers NO_REDUCER_BOUND and NOT_FOUND on state reads', async () => {
    await t.post('/events', { aggregateId: 'cart-1', eventType: 'X', data: {} });
    expect(await t.get('/aggregate-types/cart/cart-1/state')).toMatchObject({ status: 404, body: { error: 'NO_REDUCER_BOUND' } });
    expect(await t.get('/aggregate-types/account/account-404/state')).toMatchObject({ status: 404, body: { error: 'NOT_FOUND' } });
    expect(await t.get('/aggregate-types/cart')).toMatchObject({ status: 404, body: { error: 'NOT_FOUND' } });
    expect(await t.get('/reducers/nope/status')).toMatchObject({ status: 404, body: { error: 'NOT_FOUND' } });
    // Appends to an unbound type carry no state.
    const plain = await t.post('/events', { aggregateId: 'cart-1', eventType: 'Y', data: {} });
    expect(plain.body.state).toBeUndefined();
  });

  it('reports compile failures and refuses to bind what did not compile', async () => {
    const broken = await upload(
      t,
      svc.url,
      zipSources([{ path: 'Broken.cs', content: 'using EventSourcing; public class X { int a = ; }' }]),
      'broken-1',
    );
    expect(broken.status).toBe(202);
    const st = await compiled(t, 'broken-1');
    expect(st.body).toMatchObject({
      id: 'broken-1',
      status: 'failed',
      compilationError: expect.stringMatching(/Broken\.cs\(1,\d+\): error CS/),
    });
    expect(st.body.discovered).toBeUndefined();
    const none = await upload(t, svc.url, zipSources([{ path: 'Plain.cs', content: 'public class Nothing {}' }]), 'none-1');
    expect(none.status).toBe(202);
    expect((await compiled(t, 'none-1')).body.compilationError).toMatch(/no implementation of IReducer/i);

    const put = (body: unknown) => request(`${svc.url}/aggregate-types/account`, 'PUT', body, { 'x-api-key': t.key });
    expect(await put({ reducerId: 'broken-1' })).toMatchObject({ status: 409, body: { error: 'REDUCER_NOT_COMPILED' } });
    expect(await put({ reducerId: 'missing' })).toMatchObject({ status: 404, body: { error: 'NOT_FOUND' } });
    expect(await put({ reducerId: 'bank-v2', className: 'No.Such' })).toMatchObject({
      status: 400,
      body: { error: 'NO_MATCHING_REDUCER' },
    });
    expect((await request(`${svc.url}/aggregate-types/order`, 'PUT', { reducerId: 'bank-v2' }, { 'x-api-key': t.key })).body.error).toBe(
      'NO_MATCHING_REDUCER',
    );
    expect(await put({})).toMatchObject({ status: 400, body: { error: 'VALIDATION_FAILED', field: 'reducerId' } });
  });

  it('refuses bad uploads with clear codes', async () => {
    expect((await upload(t, svc.url, Buffer.from('not a zip'))).body.error).toBe('INVALID_ARCHIVE');
    expect((await upload(t, svc.url, bankZip(), 'bank-v1')).body).toMatchObject({ error: 'ALREADY_EXISTS' });
    const json = await t.post('/reducers/upload', { file: 'x' });
    expect(json).toMatchObject({ status: 415, body: { error: 'UNSUPPORTED_MEDIA_TYPE' } });
    const noFile = new FormData();
    noFile.append('reducerId', 'x-1');
    const res = await fetch(`${svc.url}/reducers/upload`, { method: 'POST', headers: { 'x-api-key': t.key }, body: noFile });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).field).toBe('file');
  });

  it('keeps one tenant’s reducers and states from another', async () => {
    const other = await newTenant(svc.url, 'other');
    expect((await other.get('/reducers/bank-v1/status')).status).toBe(404);
    expect((await other.get('/aggregate-types/account')).status).toBe(404);
    await other.post('/events', { aggregateId: 'account-1', eventType: 'AccountOpened', data: { owner: 'z' } });
    expect((await other.get('/aggregate-types/account/account-1/state')).body.error).toBe('NO_REDUCER_BOUND');
  });
});

describe('when the runtime cannot run the reducer', () => {
  it('answers 503 after a bounded wait and stores nothing', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-rt-down-'));
    const good = new ServiceProcess({ DATA_DIR: dataDir });
    await good.start();
    const t = await newTenant(good.url, 'down');
    await upload(t, good.url, bankZip(), 'bank');
    expect((await compiled(t, 'bank')).body.status).toBe('compiled');
    await good.kill('SIGTERM');

    // Same store, but a runtime whose executors cannot start.
    const brokenRuntime = fs.mkdtempSync(path.join(os.tmpdir(), 'es-rt-broken-'));
    fs.writeFileSync(path.join(brokenRuntime, 'EventSourcing.Runtime.dll'), 'not an assembly');
    const down = new ServiceProcess({ DATA_DIR: dataDir, RUNTIME_DIR: brokenRuntime, RUNTIME_UNAVAILABLE_WAIT_MS: '800' });
    await down.start();
    try {
      const c = clientFor(down.url, t.key);
      const started = Date.now();
      const res = await c.post('/events', { aggregateId: 'account-9', eventType: 'AccountOpened', data: { owner: 'x' } });
      expect(res).toMatchObject({ status: 503, body: { error: 'RUNTIME_UNAVAILABLE' } });
      expect(Date.now() - started).toBeLessThan(10_000);
      expect((await c.get('/events/account-9')).body.events).toEqual([]);
      // Types without a reducer are unaffected.
      expect((await c.post('/events', { aggregateId: 'note-1', eventType: 'X', data: {} })).status).toBe(201);
    } finally {
      await down.kill('SIGTERM');
      fs.rmSync(dataDir, { recursive: true, force: true });
      fs.rmSync(brokenRuntime, { recursive: true, force: true });
    }
  });
});
