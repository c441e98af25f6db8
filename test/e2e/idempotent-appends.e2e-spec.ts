import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { postKeyed } from '../support/keyed-append';
import { exampleSources } from '../support/runtime-harness';
import { deployReducer } from '../support/tenant-code';
import { Client, clientFor, newTenant, RunningService, ServiceProcess, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { elapse } from '../support/wait';

/** README "Retrying appends safely": Idempotency-Key on POST /events and /events/batch, over HTTP, on both stores. */
jest.setTimeout(180_000);
afterAll(() => stopBackends(), 60_000);

const one = (aggregateId: string, data: unknown = { n: 1 }) => JSON.stringify({ aggregateId, eventType: 'Happened', data });
const batch = (aggregateId: string) =>
  JSON.stringify({
    aggregateId,
    events: [
      { eventType: 'A', data: { x: 1 } },
      { eventType: 'B', data: { x: 2.5 } },
    ],
  });

/** The tenant's head position, without storing anything of the aggregates under test: the next append's position minus 1. */
async function head(c: Client): Promise<number> {
  const res = await c.post('/events', { aggregateId: `probe-${Math.random()}`, eventType: 'Probe', data: {} });
  expect(res.status).toBe(201);
  return res.body.position - 1;
}

describe.each(STORE_BACKENDS)('idempotent appends on %s', (backend) => {
  let svc: RunningService;
  let a: Client;
  let b: Client;
  const post = (c: Client, p: string, body: string, key?: string) => postKeyed(svc.url, c.key, p, body, key);

  beforeAll(async () => {
    svc = await startService(await envFor(backend));
    a = await newTenant(svc.url, 'idem-a');
    b = await newTenant(svc.url, 'idem-b');
  }, 120_000);
  afterAll(() => svc?.close());

  it('answers a repeat with the first answer, byte for byte, and stores nothing', async () => {
    const first = await post(a, '/events', one('order-1'), 'k-one');
    expect(first.status).toBe(201);
    expect(first.replayed).toBeUndefined();
    const before = await head(a);
    const again = await post(a, '/events', one('order-1'), 'k-one');
    expect(again.status).toBe(201);
    expect(again.replayed).toBe('true');
    expect(again.text).toBe(first.text);
    // The quoted form of the draft names the same key.
    const quoted = await post(a, '/events', one('order-1'), '"k-one"');
    expect([quoted.status, quoted.replayed, quoted.text]).toEqual([201, 'true', first.text]);
    expect(await head(a)).toBe(before + 1); // only head()'s own probe was stored
    const read = await a.get('/events/order-1');
    expect(read.body.events.map((e: any) => e.eventId)).toEqual([first.body.eventId]);
  });

  it('refuses the key with another body (422 IDEMPOTENCY_KEY_REUSED) or on the other route, and stores nothing', async () => {
    const first = await post(a, '/events', one('order-2', { n: 1 }), 'k-two');
    expect(first.status).toBe(201);
    const before = await head(a);
    const other = await post(a, '/events', one('order-2', { n: 2 }), 'k-two');
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({ error: 'IDEMPOTENCY_KEY_REUSED', idempotencyKey: 'k-two' });
    // Whitespace is part of the bytes: another body.
    const spaced = await post(a, '/events', one('order-2', { n: 1 }).replace(':', ': '), 'k-two');
    expect(spaced.body.error).toBe('IDEMPOTENCY_KEY_REUSED');
    const route = await post(a, '/events/batch', batch('order-2'), 'k-two');
    expect(route.body.error).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await head(a)).toBe(before + 1);
    expect((await a.get('/events/order-2')).body.events).toHaveLength(1);
  });

  it('replays a batch with its eventIds, versions and positions', async () => {
    const first = await post(a, '/events/batch', batch('cart-1'), 'k-batch');
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ startVersion: 1, endVersion: 2 });
    const before = await head(a);
    const again = await post(a, '/events/batch', batch('cart-1'), 'k-batch');
    expect([again.status, again.replayed]).toEqual([201, 'true']);
    expect(again.text).toBe(first.text);
    expect(await head(a)).toBe(before + 1);
    const events = (await a.get('/events/cart-1')).body.events;
    expect(events.map((e: any) => e.eventId)).toEqual(first.body.eventIds);
  });

  it('stores once for N concurrent identical requests on separate connections, all answered alike', async () => {
    const before = await head(a);
    const answers = await Promise.all(Array.from({ length: 24 }, () => post(a, '/events/batch', batch('race-1'), 'k-race')));
    expect(answers.map((x) => x.status)).toEqual(answers.map(() => 201));
    expect([...new Set(answers.map((x) => x.text))]).toEqual([answers[0].text]);
    expect(answers.filter((x) => x.replayed === undefined)).toHaveLength(1);
    expect((await a.get('/events/race-1')).body.events).toHaveLength(2);
    expect(await head(a)).toBe(before + 2 + 1);
  });

  it('keeps keys per tenant: another tenant’s same key and body is its own append', async () => {
    const fromA = await post(a, '/events', one('shared-1'), 'k-tenant');
    const fromB = await post(b, '/events', one('shared-1'), 'k-tenant');
    expect([fromA.status, fromB.status]).toEqual([201, 201]);
    expect(fromB.replayed).toBeUndefined();
    expect(fromB.body.eventId).not.toBe(fromA.body.eventId);
    expect((await b.get('/events/shared-1')).body.events.map((e: any) => e.eventId)).toEqual([fromB.body.eventId]);
    const againB = await post(b, '/events', one('shared-1'), 'k-tenant');
    expect([againB.replayed, againB.text]).toEqual(['true', fromB.text]);
  });

  it('does not remember a refused request: a 409 is answered again, then a corrected body takes the key', async () => {
    const seed = await post(a, '/events', one('acct-1'));
    expect(seed.status).toBe(201);
    const stale = JSON.stringify({ aggregateId: 'acct-1', eventType: 'Happened', data: {}, expectedVersion: 0 });
    expect((await post(a, '/events', stale, 'k-409')).status).toBe(409);
    expect((await post(a, '/events', stale, 'k-409')).status).toBe(409);
    const fixed = JSON.stringify({ aggregateId: 'acct-1', eventType: 'Happened', data: {}, expectedVersion: 1 });
    const ok = await post(a, '/events', fixed, 'k-409');
    expect([ok.status, ok.replayed, ok.body.version]).toEqual([201, undefined, 2]);
    // Once stored, the answer is the first one whatever the stream does next (expectedVersion 1 is stale now).
    const again = await post(a, '/events', fixed, 'k-409');
    expect([again.status, again.replayed, again.text]).toEqual([201, 'true', ok.text]);
  });

  it('refuses a malformed key with 400 INVALID_IDEMPOTENCY_KEY before storing anything', async () => {
    for (const bad of ['', 'has space', 'x'.repeat(256), 'clé']) {
      const res = await post(a, '/events', one('bad-key-1'), bad);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('INVALID_IDEMPOTENCY_KEY');
    }
    expect((await a.get('/events/bad-key-1')).body.events).toHaveLength(0);
  });
});

describe.each(STORE_BACKENDS)('idempotent appends with a reducer bound on %s', (backend) => {
  let svc: RunningService;
  let a: Client;
  const post = (body: string, key?: string) => postKeyed(svc.url, a.key, '/events', body, key);
  const deposit = (amount: number) => JSON.stringify({ aggregateId: 'account-1', eventType: 'MoneyDeposited', data: { amount } });

  beforeAll(async () => {
    svc = await startService(await envFor(backend));
    a = await newTenant(svc.url, 'idem-reducer');
    await deployReducer(svc.url, a.key, 'bank', exampleSources('bank-account'));
  }, 180_000);
  afterAll(() => svc?.close());

  it('replays the state the first answer had, and the state goes on from what was stored', async () => {
    const first = await post(deposit(10), 'k-state');
    expect(first.status).toBe(201);
    expect(first.body.state).toMatchObject({ balance: 10, transactions: 1 });
    const second = await post(deposit(5));
    expect(second.body.state).toMatchObject({ balance: 15 });
    const replay = await post(deposit(10), 'k-state');
    expect([replay.status, replay.replayed, replay.text]).toEqual([201, 'true', first.text]);
    // The replay left the cached state alone: the next append folds on the stored 15.
    const next = await post(deposit(1));
    expect(next.body).toMatchObject({ version: 3, state: { balance: 16, transactions: 3 } });
    // An append the reducer refuses stores nothing, its key included: the retry is a new attempt, refused again.
    const refused = await post(JSON.stringify({ aggregateId: 'account-1', eventType: 'MoneyWithdrawn', data: { amount: 1000 } }), 'k-fail');
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ error: 'REDUCER_REJECTED', version: 4 });
    const refusedAgain = await post(
      JSON.stringify({ aggregateId: 'account-1', eventType: 'MoneyWithdrawn', data: { amount: 1000 } }),
      'k-fail',
    );
    expect([refusedAgain.status, refusedAgain.replayed, refusedAgain.body.error]).toEqual([422, undefined, 'REDUCER_REJECTED']);
    expect((await a.get('/events/account-1')).body.events).toHaveLength(3);
  });
});

describe('idempotent appends across two instances on postgres', () => {
  let one: RunningService;
  let two: RunningService;
  let key: string;

  beforeAll(async () => {
    const env = await envFor('postgres'); // one database, two instances
    one = await startService(env);
    two = await startService(env);
    key = (await newTenant(one.url, 'idem-two')).key;
  }, 120_000);
  afterAll(async () => {
    await one?.close();
    await two?.close();
  });

  it('stores once when both instances take the same keyed request at once, every answer the same', async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const id = `multi-${attempt}`;
      const answers = await Promise.all(
        Array.from({ length: 16 }, (_, i) => postKeyed((i % 2 ? two : one).url, key, '/events/batch', batch(id), `k-${id}`)),
      );
      expect(answers.map((x) => x.status)).toEqual(answers.map(() => 201));
      expect([...new Set(answers.map((x) => x.text))]).toEqual([answers[0].text]);
      expect(answers.filter((x) => x.replayed === undefined)).toHaveLength(1);
      expect((await clientFor(two.url, key).get(`/events/${id}`)).body.events.map((e: any) => e.eventId)).toEqual(answers[0].body.eventIds);
    }
  });
});

describe.each(STORE_BACKENDS)('idempotency key expiry on %s', (backend) => {
  let svc: RunningService;
  let a: Client;

  beforeAll(async () => {
    // A long sweep period: the expired row is still there when the key is used again (the store must take it over).
    svc = await startService({ ...(await envFor(backend)), IDEMPOTENCY_KEYS_KEEP_MS: '1000', IDEMPOTENCY_KEYS_SWEEP_MS: '3600000' });
    a = await newTenant(svc.url, 'idem-expiry');
  }, 120_000);
  afterAll(() => svc?.close());

  it('forgets a key after IDEMPOTENCY_KEYS_KEEP_MS: the same request is then a new append', async () => {
    const first = await postKeyed(svc.url, a.key, '/events', one('exp-1'), 'k-exp');
    expect(first.status).toBe(201);
    let later = await postKeyed(svc.url, a.key, '/events', one('exp-1'), 'k-exp');
    // Within the window: replays (nothing stored); the condition waited on is the key's expiry.
    for (const end = Date.now() + 20_000; later.replayed === 'true' && Date.now() < end;) {
      expect(later.text).toBe(first.text);
      later = await postKeyed(svc.url, a.key, '/events', one('exp-1'), 'k-exp');
    }
    expect([later.status, later.replayed, later.body.version]).toEqual([201, undefined, 2]);
    // The key now names the second append.
    const again = await postKeyed(svc.url, a.key, '/events', one('exp-1'), 'k-exp');
    expect([again.replayed, again.text]).toEqual(['true', later.text]);
    expect((await a.get('/events/exp-1')).body.events).toHaveLength(2);
  });
});

describe.each(STORE_BACKENDS)('idempotent appends across a SIGKILL on %s', (backend) => {
  let env: Record<string, string>;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-idem-'));
    env = { DATA_DIR: dataDir, ...(await envFor(backend)) };
  }, 120_000);
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('answers the stored append after a kill between its commit and its response', async () => {
    // The test hook kills the process right after the append with this key is committed, before it is answered.
    const svc = new ServiceProcess({ ...env, TEST_KILL_AFTER_COMMIT_KEY: 'die-after-commit' });
    await svc.start();
    const c = await newTenant(svc.url, 'idem-kill');
    await expect(postKeyed(svc.url, c.key, '/events/batch', batch('crash-1'), 'die-after-commit')).rejects.toThrow();
    await svc.exited();
    expect(svc.child.signalCode).toBe('SIGKILL');

    const again = new ServiceProcess(env);
    await again.start();
    try {
      const retry = await postKeyed(again.url, c.key, '/events/batch', batch('crash-1'), 'die-after-commit');
      expect([retry.status, retry.replayed]).toEqual([201, 'true']);
      const stored = (await clientFor(again.url, c.key).get('/events/crash-1')).body.events;
      expect(stored.map((e: any) => e.eventId)).toEqual(retry.body.eventIds);
      expect(stored.map((e: any) => e.position)).toEqual([retry.body.startPosition, retry.body.endPosition]);
      const twice = await postKeyed(again.url, c.key, '/events/batch', batch('crash-1'), 'die-after-commit');
      expect(twice.text).toBe(retry.text);
    } finally {
      await again.kill('SIGTERM');
    }
  });

  it('stores each of a burst in flight at kill -9 exactly once when every one is retried', async () => {
    const svc = new ServiceProcess(env);
    await svc.start();
    const c = await newTenant(svc.url, 'idem-burst');
    const n = 60;
    const answered = new Map<number, string>();
    const burst = Array.from({ length: n }, (_, i) =>
      postKeyed(svc.url, c.key, '/events', one(`burst-${i}`, { i }), `burst-${i}`).then(
        (r) => {
          if (r.status === 201) answered.set(i, r.text);
        },
        () => undefined, // cut by the kill
      ),
    );
    // Kill once the burst is being committed (a first answer), while the rest is in flight.
    for (const end = Date.now() + 30_000; answered.size === 0 && Date.now() < end;) await elapse(1, 'poll interval: until a first answer');
    await svc.kill('SIGKILL');
    await Promise.all(burst);

    const again = new ServiceProcess(env);
    await again.start();
    try {
      const client = clientFor(again.url, c.key);
      for (let i = 0; i < n; i++) {
        const retry = await postKeyed(again.url, c.key, '/events', one(`burst-${i}`, { i }), `burst-${i}`);
        expect(retry.status).toBe(201);
        if (answered.has(i)) expect([retry.replayed, retry.text]).toEqual(['true', answered.get(i)]);
        const events = (await client.get(`/events/burst-${i}`)).body.events;
        expect(events.map((e: any) => [e.eventId, e.version, e.position])).toEqual([[retry.body.eventId, 1, retry.body.position]]);
      }
    } finally {
      await again.kill('SIGTERM');
    }
  });
});
