import { Client, newTenant, RunningService, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { zipSources } from '../support/zip-writer';
import { elapse } from '../support/wait';

/**
 * Issue 27, item 8: a projection whose events update several keys (IResolveKeys). Inventory per
 * SKU: an OrderPlaced of three lines updates three SKU keys, each key's lane in log order; an
 * event resolving to no key is skipped; each key's lane applies with its own key (Apply(key, state, e)).
 * Over HTTP, both stores.
 */
jest.setTimeout(300_000);
afterAll(() => stopBackends(), 60_000);

const INVENTORY = `
using System.Collections.Generic;
using System.Linq;
using EventSourcing;
namespace Shop
{
    public sealed class SkuStock { public long Sold { get; set; } public List<string> Orders { get; set; } = new(); }
    [ProjectionName("inventory-per-sku")]
    public sealed class InventoryProjection : IProjection<SkuStock>, IResolveKeys<SkuStock>
    {
        public string? ResolveKey(Event e) => null;
        public IReadOnlyList<string>? ResolveKeys(Event e) =>
            e.EventType == "OrderPlaced"
                ? e.Data.GetProperty("lines").EnumerateArray().Select(l => l.GetProperty("sku").GetString()!).ToList()
                : null;
        // Lanes call the keyed Apply: each SKU's lane adds its own lines of the order.
        public SkuStock Apply(string sku, SkuStock s, Event e)
        {
            foreach (var line in e.Data.GetProperty("lines").EnumerateArray())
                if (line.GetProperty("sku").GetString() == sku) s.Sold += line.GetProperty("qty").GetInt64();
            s.Orders.Add(e.AggregateId);
            return s;
        }
        public SkuStock Apply(SkuStock s, Event e) => s;
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

async function deploy(url: string, c: Client, file: string, source: string): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([zipSources([{ path: file, content: source }])]), 'p.zip');
  const res = await fetch(`${url}/projections/upload`, { method: 'POST', headers: { 'x-api-key': c.key }, body: form });
  const { uploadId } = (await res.json()) as { uploadId: string };
  const st = await until(
    () => c.get(`/projections/${uploadId}/status`),
    (r) => r.body?.status === 'compiled' || r.body?.status === 'failed',
  );
  if (!st.body.projectionId) throw new Error(`not deployed: ${JSON.stringify(st.body)}`);
  return st.body.projectionId;
}

describe.each(STORE_BACKENDS)('one event, several keys (IResolveKeys) on %s', (backend) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({ ...(await envFor(backend)) });
  });
  afterAll(() => svc?.close());

  it('inventory per SKU: an order of three lines updates three SKU keys, each in order', async () => {
    const c = await newTenant(svc.url, `keys-inventory-${backend}`);
    const id = await deploy(svc.url, c, 'Inventory.cs', INVENTORY);
    const order = (orderId: string, lines: [string, number][]) =>
      c.post('/events', { aggregateId: orderId, eventType: 'OrderPlaced', data: { lines: lines.map(([sku, qty]) => ({ sku, qty })) } });
    expect(
      (
        await order('order-1', [
          ['sku-1', 2],
          ['sku-2', 1],
          ['sku-3', 5],
        ])
      ).status,
    ).toBe(201);
    expect((await c.post('/events', { aggregateId: 'cart-9', eventType: 'CartOpened', data: {} })).status).toBe(201); // no key: skipped
    expect((await order('order-2', [['sku-1', 1]])).status).toBe(201);
    const state = (sku: string) => c.get(`/projections/${id}/state/${sku}`);
    const sku1 = await until(
      () => state('sku-1'),
      (r) => r.status === 200 && r.body.state.orders?.length === 2,
    );
    expect(sku1.body.state).toEqual({ sold: 3, orders: ['order-1', 'order-2'] }); // both orders, in log order
    const sku2 = await until(
      () => state('sku-2'),
      (r) => r.status === 200,
    );
    const sku3 = await until(
      () => state('sku-3'),
      (r) => r.status === 200,
    );
    // Each SKU's lane applied order-1 once, with its own key.
    expect(sku2.body.state).toEqual({ sold: 1, orders: ['order-1'] });
    expect(sku3.body.state).toEqual({ sold: 5, orders: ['order-1'] });
    expect((await state('cart-9')).status).toBe(404);
  });
});
