import { RuntimePool } from '../../src/tenant-code/runtime-pool';
import { TransientAssemblies } from '../../src/tenant-code/transient-assemblies';
import { Client, newTenant, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { deployReducer, projectionActive, Sources, until, uploadProjection } from '../support/tenant-code';
import { zipSources } from '../support/zip-writer';

/**
 * Issue 27, item 4: a dry run of a candidate over the tenant's real history, promoting nothing and
 * notifying nobody. A projection with history and a candidate that changes one key's state, adds a
 * key and throws on one event type: the report says exactly that (counts, diffs, the failing event);
 * the live states and notifications are unchanged and the candidate's assembly is gone afterwards.
 * A reducer dry run against the bound reducer; a failed compile's diagnostics; one run per tenant.
 */
jest.setTimeout(300_000);
afterAll(() => stopBackends(), 60_000);

const projection = (body: string, keyOf: string): Sources => [
  {
    path: 'OrderTotals.cs',
    content: `
using System;
using EventSourcing;
namespace Shop
{
    public sealed class Totals { public int Count { get; set; } public decimal Total { get; set; } }
    [ProjectionName("order-totals")]
    public sealed class OrderTotals : IProjection<Totals>
    {
        public string? ResolveKey(Event e) => ${keyOf};
        public Totals Apply(Totals s, Event e)
        {
            var amount = e.EventType == "Note" ? 0m : e.Data.GetProperty("amount").GetDecimal();
            ${body}
            return s;
        }
    }
}`,
  },
];

// Live: items add up, refunds subtract, notes are not this projection's.
const LIVE = projection(
  `if (e.EventType == "ItemAdded") { s.Count++; s.Total += amount; } else if (e.EventType == "Refunded") s.Total -= amount;`,
  `e.EventType == "Note" ? null : e.AggregateId`,
);
// Candidate: an item over 8 counts double (order-1 changes), notes go to a key of their own (added), refunds throw.
const CANDIDATE = projection(
  `if (e.EventType == "ItemAdded") { s.Count++; s.Total += amount > 8 ? amount * 2 : amount; }
            else if (e.EventType == "Refunded") throw new InvalidOperationException("refunds are not supported");
            else if (e.EventType == "Note") s.Count++;`,
  `e.EventType == "Note" ? "notes" : e.AggregateId`,
);

const reducer = (withdrawal: string): Sources => [
  {
    path: 'Wallet.cs',
    content: `
using EventSourcing;
namespace Wallets
{
    public sealed class Wallet { public decimal Balance { get; set; } }
    [AggregateType("wallet")]
    public sealed class WalletReducer : IReducer<Wallet>
    {
        public Wallet Apply(Wallet s, Event e)
        {
            var amount = e.Data.GetProperty("amount").GetDecimal();
            if (e.EventType == "Deposited") s.Balance += amount;
            else if (e.EventType == "Withdrawn") s.Balance -= ${withdrawal};
            return s;
        }
    }
}`,
  },
];

async function startDryRun(url: string, c: Client, path: string, sources: Sources, fields: Record<string, string> = {}) {
  const form = new FormData();
  form.append('file', new Blob([zipSources(sources)], { type: 'application/zip' }), 'candidate.zip');
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'x-api-key': c.key }, body: form });
  return { status: res.status, body: (await res.json()) as any };
}

async function finished(c: Client, path: string): Promise<any> {
  const r = await until(
    () => c.get(path),
    (r) => r.status !== 200 || r.body.status === 'completed' || r.body.status === 'failed',
    120_000,
    path,
  );
  expect(r.status).toBe(200);
  return r.body;
}

describe.each(STORE_BACKENDS)('dry runs on %s', (backend) => {
  let svc: Awaited<ReturnType<typeof startService>>;
  beforeAll(async () => {
    svc = await startService({ ...(await envFor(backend)) });
  });
  afterAll(() => svc?.close());

  it('reports the keys a candidate projection changes, adds and fails on, and changes nothing live', async () => {
    const c = await newTenant(svc.url, `dry-projection-${backend}`);
    const projectionId = await projectionActive(svc.url, c.key, (await uploadProjection(svc.url, c.key, LIVE)).uploadId);
    const append = async (aggregateId: string, eventType: string, data: object) => {
      const r = await c.post('/events', { aggregateId, aggregateType: 'order', eventType, data });
      expect(r.status).toBe(201);
      return r.body as { eventId: string; position: number };
    };
    await append('order-1', 'ItemAdded', { amount: 10 });
    await append('order-1', 'ItemAdded', { amount: 5 });
    await append('order-2', 'ItemAdded', { amount: 7 });
    const refund = await append('order-3', 'Refunded', { amount: 2 });
    const last = await append('order-2', 'Note', {});
    const live = async () =>
      Promise.all(
        ['order-1', 'order-2', 'order-3'].map((k) => c.get(`/projections/${projectionId}/state/${k}?minPosition=${last.position}`)),
      );
    const before = await until(live, (rs) => rs.every((r) => r.status === 200));
    expect(before.map((r) => r.body.state)).toEqual([
      { count: 2, total: 15 },
      { count: 1, total: 7 },
      { count: 0, total: -2 },
    ]);
    const notificationsBefore = (await c.get(`/projections/${projectionId}/notifications`)).body.notifications;

    // One at a time per tenant: of two started together, one runs and the other is refused with its id.
    const both = await Promise.all([1, 2].map(() => startDryRun(svc.url, c, `/projections/${projectionId}/dry-run`, CANDIDATE)));
    const accepted = both.find((r) => r.status === 202)!;
    expect(accepted).toMatchObject({ body: { status: 'running', dryRunId: expect.any(String) } });
    expect(both.find((r) => r !== accepted)).toMatchObject({
      status: 409,
      body: { error: 'DRY_RUN_RUNNING', dryRunId: accepted.body.dryRunId },
    });
    const run = await finished(c, `/projections/${projectionId}/dry-runs/${accepted.body.dryRunId}`);

    expect(run).toMatchObject({ status: 'completed', kind: 'projection', target: projectionId, progress: { eventsRead: 5, keysSeen: 4 } });
    expect(run.report).toMatchObject({
      candidate: { className: 'Shop.OrderTotals' },
      baseline: { versionId: expect.any(String) },
      eventsRead: 5,
      truncated: false,
      truncatedReason: null,
      compared: 'all',
      keys: { added: 1, removed: 0, changed: 1, unchanged: 1, held: 1 },
    });
    expect(run.report.diffs).toEqual([
      { key: 'notes', change: 'added', patch: [{ op: 'add', path: '', value: { count: 1, total: 0 } }] },
      { key: 'order-1', change: 'changed', patch: [{ op: 'replace', path: '/total', value: 25 }] },
    ]);
    expect(run.report.failures).toEqual([
      {
        eventType: 'Refunded',
        count: 1,
        first: expect.objectContaining({
          eventId: refund.eventId,
          position: refund.position,
          aggregateId: 'order-3',
          key: 'order-3',
          code: 'APPLY_FAILED',
          message: expect.stringContaining('refunds are not supported'),
        }),
      },
    ]);

    // Nothing live moved: the same states, no notification, the candidate neither deployed nor loaded.
    expect((await live()).map((r) => r.body)).toEqual(before.map((r) => r.body));
    expect((await c.get(`/projections/${projectionId}/notifications`)).body.notifications).toEqual(notificationsBefore);
    expect((await c.get(`/projections/${projectionId}/status`)).body.pendingVersion ?? null).toBeNull();
    expect((await c.get(`/projections/${projectionId}/state/notes`)).status).toBe(404);
    expect(svc.app.get(TransientAssemblies).size).toBe(0);
    expect(
      svc.app
        .get(RuntimePool)
        .loadedAssemblies(c.tenantId)
        .filter((id) => id.includes('dry-run~')),
    ).toEqual([]);
  });

  it('bounds a run: maxEvents stops it with truncated: true and the reason', async () => {
    const c = await newTenant(svc.url, `dry-bounded-${backend}`);
    const projectionId = await projectionActive(svc.url, c.key, (await uploadProjection(svc.url, c.key, LIVE)).uploadId);
    for (const amount of [1, 2, 3])
      expect((await c.post('/events', { aggregateId: 'order-9', eventType: 'ItemAdded', data: { amount } })).status).toBe(201);
    const accepted = await startDryRun(svc.url, c, `/projections/${projectionId}/dry-run`, LIVE, { maxEvents: '2' });
    const run = await finished(c, `/projections/${projectionId}/dry-runs/${accepted.body.dryRunId}`);
    expect(run.report).toMatchObject({ eventsRead: 2, truncated: true, truncatedReason: 'maxEvents', compared: 'touched' });
  });

  it('dry-runs a reducer against the bound one, aggregate by aggregate', async () => {
    const c = await newTenant(svc.url, `dry-reducer-${backend}`);
    await deployReducer(svc.url, c.key, 'wallet-live', reducer('amount'));
    for (const [aggregateId, eventType, amount] of [
      ['wallet-1', 'Deposited', 10],
      ['wallet-1', 'Deposited', 5],
      ['wallet-2', 'Deposited', 3],
      ['wallet-2', 'Withdrawn', 1],
    ] as const)
      expect((await c.post('/events', { aggregateId, eventType, data: { amount } })).status).toBe(201);
    // The candidate charges a fee of 1 on each withdrawal: wallet-2 changes, wallet-1 does not.
    const accepted = await startDryRun(svc.url, c, '/aggregate-types/wallet/dry-run', reducer('amount + 1'));
    expect(accepted.status).toBe(202);
    const run = await finished(c, `/aggregate-types/wallet/dry-runs/${accepted.body.dryRunId}`);
    expect(run.report).toMatchObject({
      baseline: { reducerId: 'wallet-live', className: 'Wallets.WalletReducer' },
      eventsRead: 4,
      keys: { added: 0, removed: 0, changed: 1, unchanged: 1, held: 0 },
      diffs: [{ key: 'wallet-2', change: 'changed', patch: [{ op: 'replace', path: '/balance', value: 1 }] }],
      failures: [],
    });
    // Still the live reducer's state, and its binding.
    expect((await c.get('/aggregate-types/wallet/wallet-2/state')).body).toMatchObject({ state: { balance: 2 } });
    expect((await c.get('/aggregate-types/wallet')).body).toMatchObject({ reducerId: 'wallet-live' });
  });

  it("answers a candidate that does not compile with the compiler's diagnostics", async () => {
    const c = await newTenant(svc.url, `dry-broken-${backend}`);
    const broken = [{ path: 'Broken.cs', content: 'public class Broken {\n  void M() { var x = y; }\n}' }];
    const accepted = await startDryRun(svc.url, c, '/aggregate-types/wallet/dry-run', broken);
    const run = await finished(c, `/aggregate-types/wallet/dry-runs/${accepted.body.dryRunId}`);
    expect(run).toMatchObject({ status: 'failed', error: { code: 'COMPILATION_FAILED' } });
    expect(run.diagnostics).toContainEqual(expect.objectContaining({ severity: 'error', code: 'CS0103', file: 'Broken.cs', line: 2 }));
    expect((await c.get(`/aggregate-types/other/dry-runs/${accepted.body.dryRunId}`)).status).toBe(404);
  });
});
