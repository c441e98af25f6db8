import { Client, newTenant, RunningService, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { zipSources } from '../support/zip-writer';
import { Store, STORE } from '../../src/store/store.port';
import { elapse } from '../support/wait';

/**
 * Issue 15, item 4: the router's work per append does not grow with the tenant's number of
 * projections. Before, every live version had a router of its own: an append of a tenant with 12
 * projections read the log 12 times, asked 12 resolves and wrote 12 routing transactions (and 200
 * projections made sequential appends p99 12 → 115 ms, for another tenant too: BENCHMARKS.md).
 * Now one router per tenant reads the log once for all versions at the same position and routes
 * them in one transaction. Counted on the real store of the running service, over HTTP, both stores.
 */
jest.setTimeout(300_000);
afterAll(() => stopBackends(), 60_000);

const tally = (n: number) => `
using EventSourcing;
namespace Fan${n}
{
    public sealed class Tally { public long Count { get; set; } }
    [ProjectionName("fan-${n}")]
    public sealed class Fan${n}Projection : IProjection<Tally>
    {
        public string? ResolveKey(Event e) => e.AggregateId;
        public Tally Apply(Tally s, Event e) { s.Count++; return s; }
    }
}`;

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 120_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`condition not met: ${JSON.stringify(v)?.slice(0, 300)}`);
    await elapse(50, 'poll interval');
  }
}

async function deploy(url: string, c: Client, n: number): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([zipSources([{ path: `Fan${n}.cs`, content: tally(n) }])]), 'p.zip');
  const res = await fetch(`${url}/projections/upload`, { method: 'POST', headers: { 'x-api-key': c.key }, body: form });
  const { uploadId } = (await res.json()) as { uploadId: string };
  const st = await until(
    () => c.get(`/projections/${uploadId}/status`),
    (r) => r.body?.status === 'compiled' || r.body?.status === 'failed',
  );
  if (!st.body.projectionId) throw new Error(`not deployed: ${JSON.stringify(st.body)}`);
  return st.body.projectionId;
}

describe.each(STORE_BACKENDS)('routing a tenant with many projections on %s', (backend) => {
  let svc: RunningService & { app: { get(token: unknown): any } };
  let store: Store;
  beforeAll(async () => {
    // No sweep during the counts: every read and routing write below is an append's.
    svc = await startService({ ...(await envFor(backend)), LANE_SWEEP_MS: '600000', QUOTA_PROJECTIONS: '0' });
    store = svc.app.get(STORE);
  });
  afterAll(() => svc?.close());

  /** A tenant with `projections` projections, caught up; then `appends` sequential appends, counted. */
  async function routingWorkOf(projections: number, appends: number) {
    const c = await newTenant(svc.url, `fanout-${projections}-${backend}`);
    const ids: string[] = [];
    for (let n = 0; n < projections; n++) ids.push(await deploy(svc.url, c, n));
    const counted = (count: number) =>
      Promise.all(
        ids.map((id) =>
          until(
            () => c.get(`/projections/${id}/state/acct`),
            (r) => r.status === 200 && (r.body.state.count ?? r.body.state.Count) === count,
          ),
        ),
      );
    expect((await c.post('/events', { aggregateId: 'acct', eventType: 'Deposited', data: {} })).status).toBe(201);
    await counted(1);

    const reads = jest.spyOn(store.events, 'readAll');
    const routes = jest.spyOn(store.lanes.inbox, 'routeMany');
    const singleRoutes = jest.spyOn(store.lanes.inbox, 'route');
    try {
      for (let i = 0; i < appends; i++)
        expect((await c.post('/events', { aggregateId: 'acct', eventType: 'Deposited', data: {} })).status).toBe(201);
      await counted(1 + appends);
      const mine = (spy: jest.SpyInstance) => spy.mock.calls.filter((args) => args[0] === c.tenantId).length;
      return { reads: mine(reads), transactions: mine(routes) + mine(singleRoutes) };
    } finally {
      reads.mockRestore();
      routes.mockRestore();
      singleRoutes.mockRestore();
    }
  }

  it('reads the log and writes the routing once per append, whether the tenant has 1 or 12 projections', async () => {
    const appends = 6;
    const one = await routingWorkOf(1, appends);
    const twelve = await routingWorkOf(12, appends);
    // At most a pass per append (passes may take several appends at once); a pass is one read and
    // one transaction for every version at the head. Per version, it was 12 × each.
    expect(one.reads).toBeGreaterThanOrEqual(1);
    expect(one.reads).toBeLessThanOrEqual(appends * 2);
    expect(twelve.reads).toBeLessThanOrEqual(appends * 2);
    expect(twelve.transactions).toBeLessThanOrEqual(appends);
    expect(twelve.reads).toBeLessThan(12);
  });
});
