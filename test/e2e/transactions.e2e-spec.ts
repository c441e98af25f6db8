import { postKeyed } from '../support/keyed-append';
import { exampleSources } from '../support/runtime-harness';
import { Client, newTenant, RunningService, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { zipSources } from '../support/zip-writer';
import { until } from '../support/wait';

/**
 * README "Transactions" (issue 28 item 3), over HTTP on both stores: POST /events/transaction stores
 * the events of several aggregates contiguously, all or none; a wrong expected version on one
 * aggregate, a failed condition or a reducer's refusal stores nothing; each aggregate's reducer
 * state is in the answer; an Idempotency-Key replays the first answer.
 */
jest.setTimeout(300_000);
afterAll(() => stopBackends(), 60_000);

/** The tenant's head: a probe append's position, less one. */
async function head(c: Client): Promise<number> {
  const res = await c.post('/events', { aggregateId: `probe-${Math.random()}`, eventType: 'Probe', data: {} });
  expect(res.status).toBe(201);
  return res.body.position - 1;
}

describe.each(STORE_BACKENDS)('transactions on %s', (backend) => {
  let svc: RunningService;
  let a: Client;
  const tx = (c: Client, body: unknown, key?: string) => postKeyed(svc.url, c.key, '/events/transaction', JSON.stringify(body), key);

  beforeAll(async () => {
    svc = await startService(await envFor(backend));
    a = await newTenant(svc.url, 'transactions');
  }, 120_000);
  afterAll(() => svc?.close());

  it('stores three aggregates contiguously, each in the order given, aggregates in order of first appearance', async () => {
    expect((await a.post('/events', { aggregateId: 'order-1', eventType: 'Placed', data: {} })).status).toBe(201);
    const res = await tx(a, {
      events: [
        { aggregateId: 'order-1', eventType: 'Paid', data: { amount: 3 }, tags: ['customer:7'] },
        { aggregateId: 'stock-1', aggregateType: 'stock', eventType: 'Reserved', data: { n: 1 }, metadata: { m: 1 } },
        { aggregateId: 'order-1', eventType: 'Confirmed', data: {} },
        { aggregateId: 'mail-1', eventType: 'Queued', data: {} },
        { aggregateId: 'stock-1', eventType: 'Reserved', data: { n: 2 }, metadata: { m: 1 } },
      ],
      expectedVersions: { 'order-1': 1, 'stock-1': 0 },
      correlationId: 'corr-1',
    });
    expect(res.status).toBe(201);
    const { startPosition, endPosition, aggregates, timestamp } = res.body;
    expect(endPosition - startPosition).toBe(4);
    expect(typeof timestamp).toBe('string');
    expect(aggregates.map((x: any) => [x.aggregateId, x.aggregateType, x.startVersion, x.endVersion, x.eventIds.length])).toEqual([
      ['order-1', 'order', 2, 3, 2],
      ['stock-1', 'stock', 1, 2, 2],
      ['mail-1', 'mail', 1, 1, 1],
    ]);
    const log = await a.get(`/events?afterPosition=${startPosition - 1}&limit=5`);
    expect(log.body.events.map((e: any) => [e.position, e.aggregateId, e.eventType, e.correlationId])).toEqual([
      [startPosition, 'order-1', 'Paid', 'corr-1'],
      [startPosition + 1, 'order-1', 'Confirmed', 'corr-1'],
      [startPosition + 2, 'stock-1', 'Reserved', 'corr-1'],
      [startPosition + 3, 'stock-1', 'Reserved', 'corr-1'],
      [startPosition + 4, 'mail-1', 'Queued', 'corr-1'],
    ]);
    expect(log.body.events.map((e: any) => e.eventId)).toEqual(aggregates.flatMap((x: any) => x.eventIds));
    expect(log.body.events[0].tags).toEqual(['customer:7']);
    expect(log.body.events[2].metadata).toEqual({ m: 1 });
  });

  it('a wrong expected version on one of three aggregates stores nothing: 409 VERSION_CONFLICT naming it', async () => {
    for (const id of ['acct-a', 'acct-b', 'acct-c'])
      expect((await a.post('/events', { aggregateId: id, eventType: 'Opened', data: {} })).status).toBe(201);
    const before = await head(a);
    const res = await tx(a, {
      events: [
        { aggregateId: 'acct-a', eventType: 'Debited', data: { n: 5 } },
        { aggregateId: 'acct-b', eventType: 'Credited', data: { n: 5 } },
        { aggregateId: 'acct-c', eventType: 'Noted', data: {} },
      ],
      expectedVersions: { 'acct-a': 1, 'acct-b': 7, 'acct-c': 1 },
    });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: 'VERSION_CONFLICT', aggregateId: 'acct-b', expectedVersion: 7, actualVersion: 1 });
    expect(await head(a)).toBe(before + 1); // head()'s own probe only
    for (const id of ['acct-a', 'acct-b', 'acct-c']) expect((await a.get(`/events/${id}`)).body.events).toHaveLength(1);
  });

  it('takes a condition: refused when a matching event follows the read position, nothing stored', async () => {
    const query = { items: [{ types: ['Issued'], tags: ['invoice-number:2026-0001'] }] };
    const read = await a.post('/events/query', query);
    const body = (after: number) => ({
      events: [
        { aggregateId: 'invoice-1', eventType: 'Issued', data: {}, tags: ['invoice-number:2026-0001'] },
        { aggregateId: 'numbering', eventType: 'NumberUsed', data: {} },
      ],
      condition: { failIfEventsMatch: query, after },
    });
    const first = await tx(a, body(read.body.nextAfterPosition));
    expect(first.status).toBe(201);
    const second = await tx(a, { ...body(read.body.nextAfterPosition), events: [{ ...body(0).events[0], aggregateId: 'invoice-2' }] });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ error: 'APPEND_CONDITION_FAILED', position: first.body.startPosition });
    expect((await a.get('/events/invoice-2')).body.events).toEqual([]);
    // expectedVersion is checked before the condition.
    const both = await tx(a, { ...body(0), expectedVersions: { numbering: 9 } });
    expect([both.status, both.body.error, both.body.aggregateId]).toEqual([409, 'VERSION_CONFLICT', 'numbering']);
  });

  it('refuses malformed transactions with 400 naming the field', async () => {
    const ev = (aggregateId: string) => ({ aggregateId, eventType: 'E', data: {} });
    const cases: [unknown, string][] = [
      [{ events: [] }, 'events'],
      [{ events: Array.from({ length: 101 }, (_, i) => ev(`many-${i}`)) }, 'events[100].aggregateId'],
      [{ events: [ev('x')], expectedVersions: { y: 0 } }, 'expectedVersions.y'],
      [{ events: [ev('x')], expectedVersions: { x: -1 } }, 'expectedVersions.x'],
      [{ events: [{ ...ev('x'), tags: ['t', 't'] }] }, 'events[0].tags[1]'],
      [{ events: [ev('x'), { ...ev('y'), data: 3 }] }, 'events[1].data'],
      [{ events: [ev('x')], condition: { failIfEventsMatch: { items: [] } } }, 'condition.failIfEventsMatch.items'],
    ];
    const before = await head(a);
    for (const [body, field] of cases) {
      const res = await tx(a, body);
      expect({ field, status: res.status, error: res.body.error, got: res.body.field }).toEqual({
        field,
        status: 400,
        error: 'VALIDATION_FAILED',
        got: field,
      });
    }
    expect(await head(a)).toBe(before + 1);
  });

  it('replays a keyed transaction: the first answer, byte for byte, Idempotent-Replayed, nothing stored', async () => {
    const body = {
      events: [
        { aggregateId: 'idem-a', eventType: 'A', data: { x: 1 } },
        { aggregateId: 'idem-b', eventType: 'B', data: { x: 2 } },
      ],
    };
    const first = await tx(a, body, 'tx-key-1');
    expect(first.status).toBe(201);
    expect(first.replayed).toBeUndefined();
    const before = await head(a);
    const again = await tx(a, body, 'tx-key-1');
    expect([again.status, again.replayed, again.text]).toEqual([201, 'true', first.text]);
    expect(await head(a)).toBe(before + 1);
    const other = await tx(a, { ...body, correlationId: 'c' }, 'tx-key-1');
    expect([other.status, other.body.error]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED']);
    expect((await a.get('/events/idem-b')).body.events).toHaveLength(1);
  });

  describe('with a reducer bound (the bank example: it refuses an overdraft)', () => {
    let t: Client;

    beforeAll(async () => {
      t = await newTenant(svc.url, 'tx-reducers');
      const form = new FormData();
      form.append('file', new Blob([zipSources(exampleSources('bank-account'))], { type: 'application/zip' }), 'bank.zip');
      form.append('reducerId', 'bank');
      const res = await fetch(`${svc.url}/reducers/upload`, { method: 'POST', headers: { 'x-api-key': t.key }, body: form });
      expect(res.status).toBe(202);
      await until(
        () => t.get('/aggregate-types/account'),
        (r) => r.body.reducerId === 'bank' && r.body.catchUp?.status === 'done',
        180_000,
        'bank compiled, bound to account and caught up',
      );
      for (const id of ['alice', 'bob']) {
        const opened = await t.post('/events/batch', {
          aggregateId: `acct-${id}`,
          aggregateType: 'account',
          events: [
            { eventType: 'AccountOpened', data: { owner: id } },
            { eventType: 'MoneyDeposited', data: { amount: 100 } },
          ],
        });
        expect(opened.status).toBe(201);
      }
    }, 240_000);

    const transfer = (amount: number, extra: unknown[] = []) => ({
      events: [
        { aggregateId: 'acct-alice', aggregateType: 'account', eventType: 'MoneyWithdrawn', data: { amount } },
        { aggregateId: 'acct-bob', aggregateType: 'account', eventType: 'MoneyDeposited', data: { amount } },
        ...extra,
      ],
    });

    it("answers each aggregate's state, and a plain aggregate without one", async () => {
      const res = await tx(t, transfer(30, [{ aggregateId: 'memo-1', eventType: 'Noted', data: {} }]));
      expect(res.status).toBe(201);
      expect(res.body.aggregates.map((x: any) => [x.aggregateId, x.state?.balance ?? x.state?.Balance])).toEqual([
        ['acct-alice', 70],
        ['acct-bob', 130],
        ['memo-1', undefined],
      ]);
      expect(res.body.aggregates[2]).not.toHaveProperty('state');
      const state = await t.get('/aggregate-types/account/acct-bob/state');
      expect(state.body.version).toBe(3);
    });

    it('a refusal by the reducer of one member refuses the transaction: 422 REDUCER_REJECTED naming it, nothing stored', async () => {
      const before = await head(t);
      const res = await tx(t, transfer(1000));
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ error: 'REDUCER_REJECTED', aggregateId: 'acct-alice' });
      expect(await head(t)).toBe(before + 1);
      expect((await t.get('/events/acct-bob')).body.events).toHaveLength(3);
      const ok = await tx(t, transfer(10));
      expect(ok.status).toBe(201);
    });

    it('replays the states of a keyed transaction', async () => {
      const first = await tx(t, transfer(5), 'tx-state-key');
      expect(first.status).toBe(201);
      const again = await tx(t, transfer(5), 'tx-state-key');
      expect([again.status, again.replayed, again.text]).toEqual([201, 'true', first.text]);
    });
  });
});
