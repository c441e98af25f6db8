import { Cluster, range } from '../support/multi-instance';
import { Client, clientFor, newTenant } from '../support/service-harness';
import { envFor, stopBackends } from '../support/store-backends';
import { deployReducer, exampleSources, until } from '../support/tenant-code';

/**
 * Issue 27, item 7, as two instances run it: a reducer that refuses an overdraft (the bank example) and withdrawals
 * landing on both instances at once. The refusal is decided in the group commit after its version check, so a state
 * one instance folded on while the other appended is recomputed, never answered: however the appends interleave,
 * no more withdrawals are accepted than the balance covers, and what is stored is exactly what was acknowledged.
 */
jest.setTimeout(240_000);
afterAll(() => stopBackends(), 60_000);

const WITHDRAWALS = 20;

/** Sends one at a time, alternating instances, until the reducer refuses (422): how many were accepted before. */
async function acceptedUntilRefused(send: (i: number) => Promise<{ status: number }>): Promise<number> {
  for (let i = 0; ; i++) {
    const r = await send(i);
    if (r.status === 422) return i;
    expect(r.status).toBe(201);
  }
}

describe('a reducer guarding an invariant, two instances on one PostgreSQL', () => {
  let cluster: Cluster;
  let via: Client[];

  beforeAll(async () => {
    cluster = await Cluster.start(2, { ...(await envFor('postgres')), LOG_LEVEL: 'warn', RUNTIME_COMPILER_HOSTS: '1' });
    const [a, b] = cluster.urls();
    const t = await newTenant(a, 'guarded-two');
    await deployReducer(a, t.key, 'bank', exampleSources('bank-account'));
    via = [clientFor(a, t.key, t.tenantId), clientFor(b, t.key, t.tenantId)];
    for (const c of via)
      await until(
        () => c.get('/aggregate-types/account'),
        (r) => r.body?.reducerId === 'bank',
        60_000,
        'bound, seen by both',
      );
  }, 240_000);
  afterAll(() => cluster?.stop());

  it('never accepts more withdrawals than the balance covers, whichever instance each lands on', async () => {
    expect((await via[0].post('/events', { aggregateId: 'account-1', eventType: 'MoneyDeposited', data: { amount: 100 } })).status).toBe(
      201,
    );
    const withdraw = (i: number) =>
      via[i % 2].post('/events', { aggregateId: 'account-1', eventType: 'MoneyWithdrawn', data: { amount: 10 } });

    // 20 withdrawals of 10 against 100, all at once, half on each instance.
    const answers = await Promise.all(range(0, WITHDRAWALS - 1).map(withdraw));
    const accepted = answers.filter((r) => r.status === 201).length;
    for (const r of answers) {
      // Accepted, refused by the reducer, or a conflict the client retries; never a server error.
      expect([201, 409, 422]).toContain(r.status);
      if (r.status === 422) expect(r.body).toMatchObject({ error: 'REDUCER_REJECTED', eventType: 'MoneyWithdrawn' });
    }
    expect(accepted).toBeLessThanOrEqual(10);

    // Then one at a time, alternating instances, until refused: together exactly what the balance covered.
    expect(accepted + (await acceptedUntilRefused(withdraw))).toBe(10);

    // Stored: the deposit and the accepted withdrawals, none of the refused; the state agrees on both instances.
    for (const c of via) {
      expect((await c.get('/events/account-1')).body.events).toHaveLength(11);
      expect((await c.get('/aggregate-types/account/account-1/state')).body).toMatchObject({ version: 11, state: { balance: 0 } });
    }
  });

  it('keeps a transfer (a transaction over two guarded accounts) whole when transfers race on both instances', async () => {
    // Issue 28: a transaction's reducer states are computed before the commit; one instance's commit makes the other's
    // stale, and the stale one is recomputed on the log and retried, never stored on a stale state nor half stored.
    expect((await via[1].post('/events', { aggregateId: 'account-2', eventType: 'MoneyDeposited', data: { amount: 100 } })).status).toBe(
      201,
    );
    const transfer = (i: number) =>
      via[i % 2].post('/events/transaction', {
        events: [
          { aggregateId: 'account-2', eventType: 'MoneyWithdrawn', data: { amount: 10 } },
          { aggregateId: 'account-3', eventType: 'MoneyDeposited', data: { amount: 10 } },
        ],
      });
    const answers = await Promise.all(range(0, WITHDRAWALS - 1).map(transfer));
    for (const r of answers) {
      expect([201, 409, 422]).toContain(r.status);
      if (r.status === 422) expect(r.body).toMatchObject({ error: 'REDUCER_REJECTED', aggregateId: 'account-2' });
    }
    const accepted = answers.filter((r) => r.status === 201);
    expect(accepted.length).toBeLessThanOrEqual(10);
    // Each accepted transfer answered the states its own events made, and stored its two events next to each other.
    for (const r of accepted) expect(r.body.endPosition - r.body.startPosition).toBe(1);
    expect(accepted.length + (await acceptedUntilRefused(transfer))).toBe(10);

    for (const c of via) {
      const from = (await c.get('/events/account-2')).body.events;
      const to = (await c.get('/events/account-3')).body.events;
      expect([from.length, to.length]).toEqual([11, 10]);
      // Every withdrawal has its deposit at the next position: no transfer stored by half.
      const deposits = new Set(to.map((e: { position: number }) => e.position));
      for (const w of from.slice(1)) expect(deposits.has(w.position + 1)).toBe(true);
      expect((await c.get('/aggregate-types/account/account-2/state')).body).toMatchObject({ version: 11, state: { balance: 0 } });
      expect((await c.get('/aggregate-types/account/account-3/state')).body).toMatchObject({ version: 10, state: { balance: 100 } });
    }
  });
});
