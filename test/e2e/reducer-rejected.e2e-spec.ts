import { Client, newTenant, request, RunningService, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { exampleSources } from '../support/runtime-harness';
import { zipSources } from '../support/zip-writer';
import { until } from '../support/wait';

/**
 * README "Reducers guard invariants" (issue 27 item 7), over HTTP on both stores: an append whose
 * reducer throws on one of its events is refused whole (422 REDUCER_REJECTED, nothing stored, the
 * Idempotency-Key remembering nothing), and an aggregate whose stored history a newly bound reducer
 * cannot fold is reported — by its state read and by GET /aggregate-types/{type}/failed — and still
 * takes appends (held, with stateError) until a fixed reducer is bound.
 */
jest.setTimeout(180_000);
afterAll(() => stopBackends(), 60_000);

/** The bank example as shipped (it throws on an overdraft), for aggregate type `type`. */
const strictZip = (type: string) =>
  zipSources(exampleSources('bank-account').map((f) => ({ path: f.path, content: f.content.replace(/"account"/g, `"${type}"`) })));

/** The same reducer with withdrawals clamped instead of refused: the "fixed" version. */
const clampedZip = (type: string) =>
  zipSources(
    exampleSources('bank-account').map((f) => ({
      path: f.path,
      content: f.content
        .replace(/"account"/g, `"${type}"`)
        .replace(/throw new InvalidOperationException\([\s\S]*?\);/, 'amount = state.Balance;'),
    })),
  );

async function deploy(t: Client, url: string, zip: Buffer, reducerId: string, type: string) {
  const form = new FormData();
  form.append('file', new Blob([zip], { type: 'application/zip' }), 'reducer.zip');
  form.append('reducerId', reducerId);
  const res = await fetch(`${url}/reducers/upload`, { method: 'POST', headers: { 'x-api-key': t.key }, body: form });
  expect(res.status).toBe(202);
  const st = await until(
    () => t.get(`/reducers/${reducerId}/status`),
    (r) => r.body.status !== 'pending_compilation',
    120_000,
    `${reducerId} compiled`,
  );
  expect(st.body.status).toBe('compiled');
  // The compile auto-binds; its catch-up then recomputes every aggregate of the type.
  await until(
    () => t.get(`/aggregate-types/${type}`),
    (r) => r.body.reducerId === reducerId && r.body.catchUp?.status === 'done',
    60_000,
    `${reducerId} bound to ${type} and caught up`,
  );
}

/** An append with an Idempotency-Key, answering whether it was a replay. */
async function keyed(url: string, t: Client, key: string, body: unknown) {
  const res = await fetch(`${url}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': t.key, 'idempotency-key': key },
    body: JSON.stringify(body),
  });
  return { status: res.status, replayed: res.headers.get('idempotent-replayed') ?? undefined, body: (await res.json()) as any };
}

describe.each(STORE_BACKENDS)('a reducer that guards an invariant, on %s', (backend) => {
  let svc: RunningService;
  let t: Client;
  const versionOf = async (id: string) => (await t.get(`/events/${id}`)).body.events.length as number;

  beforeAll(async () => {
    svc = await startService(await envFor(backend));
    t = await newTenant(svc.url, 'rejected');
    await deploy(t, svc.url, strictZip('account'), 'bank-v1', 'account');
  }, 180_000);
  afterAll(() => svc?.close());

  it('refuses an overdraft with 422 REDUCER_REJECTED, stores nothing, and takes a deposit after it', async () => {
    await t.post('/events', { aggregateId: 'account-1', eventType: 'AccountOpened', data: { owner: 'ada' } });
    await t.post('/events', { aggregateId: 'account-1', eventType: 'MoneyDeposited', data: { amount: 100 } });
    const refused = await t.post('/events', { aggregateId: 'account-1', eventType: 'MoneyWithdrawn', data: { amount: 500 } });
    expect(refused).toEqual({
      status: 422,
      body: {
        error: 'REDUCER_REJECTED',
        message: expect.stringMatching(/^the reducer refused the event \(MoneyWithdrawn\): insufficient funds.*nothing was stored$/),
        exceptionType: 'System.InvalidOperationException',
        reducerError: expect.stringMatching(/^APPLY_FAILED: insufficient funds: balance 100, withdrawal 500/),
        eventIndex: 0,
        eventType: 'MoneyWithdrawn',
        eventId: expect.any(String),
        version: 3,
        // The tenant's own frame, located by the PDB embedded at compile time (no host frame).
        frames: [{ method: 'BankAccount.AccountReducer.Apply', file: 'AccountReducer.cs', line: expect.any(Number) }],
      },
    });
    expect(JSON.stringify(refused.body)).not.toContain('   at '); // no stack trace leaves the service
    expect(await versionOf('account-1')).toBe(2);
    expect((await t.get('/aggregate-types/account/account-1/state')).body).toMatchObject({ version: 2, state: { balance: 100 } });

    const dep = await t.post('/events', { aggregateId: 'account-1', eventType: 'MoneyDeposited', data: { amount: 50 } });
    expect(dep).toMatchObject({ status: 201, body: { version: 3, state: { balance: 150, transactions: 2 } } });
    expect(await t.get('/aggregate-types/account/account-1/failed')).toMatchObject({ status: 404 }); // not a route: two segments only
    expect((await t.get('/aggregate-types/account/failed')).body.aggregates).toEqual([]);
  });

  it('refuses a batch with one refused event whole: none of it stored', async () => {
    await t.post('/events', { aggregateId: 'account-b', eventType: 'AccountOpened', data: { owner: 'bo' } });
    const batch = await t.post('/events/batch', {
      aggregateId: 'account-b',
      events: [
        { eventType: 'MoneyDeposited', data: { amount: 10 } },
        { eventType: 'MoneyWithdrawn', data: { amount: 1000 } },
        { eventType: 'MoneyDeposited', data: { amount: 5 } },
      ],
    });
    expect(batch).toMatchObject({
      status: 422,
      body: {
        error: 'REDUCER_REJECTED',
        eventIndex: 1,
        eventType: 'MoneyWithdrawn',
        version: 3,
        message: expect.stringContaining('event 2 of 3'),
      },
    });
    expect(await versionOf('account-b')).toBe(1);
    // A reducer's refusal of bad data (here a deposit that is not positive) is the same refusal.
    const bad = await t.post('/events', { aggregateId: 'account-b', eventType: 'MoneyDeposited', data: { amount: -1 } });
    expect(bad.body).toMatchObject({ error: 'REDUCER_REJECTED', exceptionType: 'System.ArgumentException' });
    expect((await t.get('/aggregate-types/account/account-b/state')).body).toMatchObject({ version: 1, state: { balance: 0 } });
  });

  it('remembers nothing with a refused request’s Idempotency-Key: its retry is a new attempt, and once accepted a replay', async () => {
    await t.post('/events', { aggregateId: 'account-k', eventType: 'AccountOpened', data: { owner: 'kay' } });
    const withdrawal = { aggregateId: 'account-k', eventType: 'MoneyWithdrawn', data: { amount: 80 } };
    expect(await keyed(svc.url, t, 'w-1', withdrawal)).toMatchObject({ status: 422, body: { error: 'REDUCER_REJECTED' } });
    await t.post('/events', { aggregateId: 'account-k', eventType: 'MoneyDeposited', data: { amount: 100 } });
    const accepted = await keyed(svc.url, t, 'w-1', withdrawal);
    expect(accepted).toMatchObject({ status: 201, replayed: undefined, body: { version: 3, state: { balance: 20 } } });
    // The balance (20) would refuse it now: the replay of the accepted request answers first.
    const again = await keyed(svc.url, t, 'w-1', withdrawal);
    expect(again).toMatchObject({ status: 201, replayed: 'true', body: { version: 3, state: { balance: 20 } } });
    expect(await versionOf('account-k')).toBe(3);
  });

  describe('a reducer bound over history it cannot fold', () => {
    beforeAll(async () => {
      // Written while no reducer was bound to `ledger`: two overdrafts, and one account that holds.
      const write = (aggregateId: string, eventType: string, data: object) =>
        t.post('/events', { aggregateId, aggregateType: 'ledger', eventType, data });
      for (const id of ['led-1', 'led-2', 'led-3']) expect((await write(id, 'AccountOpened', { owner: id })).status).toBe(201);
      await write('led-1', 'MoneyWithdrawn', { amount: 50 });
      await write('led-2', 'MoneyDeposited', { amount: 10 });
      await write('led-3', 'MoneyDeposited', { amount: 5 });
      await write('led-3', 'MoneyWithdrawn', { amount: 7 });
      await deploy(t, svc.url, strictZip('ledger'), 'ledger-v1', 'ledger');
    }, 180_000);

    it('answers the state read with REDUCER_FAILED naming the failed event', async () => {
      const [, failed] = (await t.get('/events/led-1')).body.events;
      const read = await t.get('/aggregate-types/ledger/led-1/state');
      expect(read).toEqual({
        status: 422,
        body: {
          error: 'REDUCER_FAILED',
          message: expect.stringContaining('the reducer failed at version 2'),
          failedVersion: 2,
          reducerError: expect.stringMatching(/^APPLY_FAILED: insufficient funds/),
          eventId: failed.eventId,
          eventType: 'MoneyWithdrawn',
          version: 2,
          // The details the instance that folded it keeps (read elsewhere or after a restart: without them).
          exceptionType: 'System.InvalidOperationException',
          position: failed.position,
          frames: [{ method: 'BankAccount.AccountReducer.Apply', file: 'AccountReducer.cs', line: expect.any(Number) }],
        },
      });
      expect((await t.get('/aggregate-types/ledger/led-2/state')).body).toMatchObject({ version: 2, state: { balance: 10 } });
    });

    it('lists the aggregates it cannot fold, in id order, a page at a time', async () => {
      const all = await t.get('/aggregate-types/ledger/failed');
      expect(all.status).toBe(200);
      expect(all.body).toEqual({
        aggregates: [
          {
            aggregateId: 'led-1',
            version: 2,
            failedVersion: 2,
            code: 'REDUCER_FAILED',
            message: expect.stringMatching(/^APPLY_FAILED: insufficient funds/),
            eventId: expect.any(String),
            eventType: 'MoneyWithdrawn',
            lastModified: expect.stringMatching(/Z$/),
          },
          expect.objectContaining({ aggregateId: 'led-3', failedVersion: 3, eventType: 'MoneyWithdrawn' }),
        ],
        catchUp: { status: 'done', aggregates: 3, events: 7 },
      });
      const first = await t.get('/aggregate-types/ledger/failed?limit=1');
      expect(first.body).toMatchObject({ aggregates: [{ aggregateId: 'led-1' }], next: 'led-1' });
      const second = await t.get(`/aggregate-types/ledger/failed?limit=1&after=${first.body.next}`);
      expect(second.body.aggregates.map((a: { aggregateId: string }) => a.aggregateId)).toEqual(['led-3']);
      expect(second.body.next).toBeUndefined();
      expect(await t.get('/aggregate-types/ledger/failed?limit=0')).toMatchObject({ status: 400, body: { error: 'VALIDATION_FAILED' } });
      expect(await t.get('/aggregate-types/nothing/failed')).toMatchObject({ status: 404, body: { error: 'NO_REDUCER_BOUND' } });
    });

    it('accepts a later append to a held aggregate with the history’s stateError, and refuses one to a healthy aggregate', async () => {
      const later = await t.post('/events', { aggregateId: 'led-1', eventType: 'MoneyDeposited', data: { amount: 100 } });
      expect(later).toMatchObject({
        status: 201,
        body: { version: 3, stateError: { code: 'REDUCER_FAILED', failedVersion: 2, message: expect.stringContaining('APPLY_FAILED') } },
      });
      expect(later.body.state).toBeUndefined();
      // Held: not folded, so even what the reducer would refuse is stored (the failure is the history's, not this event's).
      const held = await t.post('/events', { aggregateId: 'led-1', eventType: 'MoneyWithdrawn', data: { amount: 1000 } });
      expect(held).toMatchObject({ status: 201, body: { version: 4, stateError: { failedVersion: 2 } } });
      expect((await t.get('/aggregate-types/ledger/failed')).body.aggregates[0]).toMatchObject({ aggregateId: 'led-1', version: 4 });
      const healthy = await t.post('/events', { aggregateId: 'led-2', eventType: 'MoneyWithdrawn', data: { amount: 11 } });
      expect(healthy).toMatchObject({ status: 422, body: { error: 'REDUCER_REJECTED' } });
    });

    it('recomputes them when a fixed reducer is bound: the list empties and the state reads', async () => {
      await deploy(t, svc.url, clampedZip('ledger'), 'ledger-v2', 'ledger');
      expect((await t.get('/aggregate-types/ledger/failed')).body).toEqual({
        aggregates: [],
        catchUp: expect.objectContaining({ status: 'done' }),
      });
      // led-1: opened, withdrew (clamped to 0), deposited 100, withdrew (clamped to 100).
      expect((await t.get('/aggregate-types/ledger/led-1/state')).body).toMatchObject({
        version: 4,
        state: { balance: 0, transactions: 3 },
      });
      const ok = await request(
        `${svc.url}/events`,
        'POST',
        { aggregateId: 'led-1', eventType: 'MoneyDeposited', data: { amount: 1 } },
        {
          'x-api-key': t.key,
        },
      );
      expect(ok).toMatchObject({ status: 201, body: { version: 5, state: { balance: 1 } } });
    });
  });
});
