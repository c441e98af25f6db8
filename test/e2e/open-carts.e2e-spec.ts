import { ADMIN_TOKEN, Client, newTenant, request, RunningService, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { WsCollector } from '../support/stream-clients';
import { zipSources } from '../support/zip-writer';
import { until } from '../support/wait';

/**
 * Issue 27, item 8: a projection removes a key's state (IDeletableProjection). Open carts: CartOpened and
 * ItemAdded keep a cart's state, CartCheckedOut removes it — the key's read answers 404, its notification
 * says `state: null, deleted: true` on polling and WebSocket, the status's lane count drops, and the key no
 * longer counts against keysPerProjection (full, one removed, a new key fits; the removed one comes back as
 * a new key); a rebuild removes it at the same event. Over HTTP, both stores.
 */
jest.setTimeout(300_000);
afterAll(() => stopBackends(), 60_000);

const OPEN_CARTS = `
using System.Collections.Generic;
using EventSourcing;
namespace Shop
{
    public sealed class Cart { public List<string> Items { get; set; } = new(); }
    [ProjectionName("open-carts")]
    public sealed class OpenCarts : IProjection<Cart>, IDeletableProjection<Cart>
    {
        public string? ResolveKey(Event e) => e.AggregateType == "cart" ? e.AggregateId : null;
        public Cart Apply(Cart cart, Event e)
        {
            if (e.EventType == "ItemAdded") cart.Items.Add(e.Data.GetProperty("sku").GetString()!);
            return cart;
        }
        public bool ShouldDelete(Cart cart, Event e) => e.EventType == "CartCheckedOut";
    }
}`;

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

async function deploy(url: string, c: Client, source = OPEN_CARTS): Promise<{ projectionId: string; uploadId: string }> {
  const form = new FormData();
  form.append('file', new Blob([zipSources([{ path: 'OpenCarts.cs', content: source }])]), 'p.zip');
  const res = await fetch(`${url}/projections/upload`, { method: 'POST', headers: { 'x-api-key': c.key }, body: form });
  const { uploadId } = (await res.json()) as { uploadId: string };
  const st = await until(
    () => c.get(`/projections/${uploadId}/status`),
    (r) => r.body?.status === 'compiled' || r.body?.status === 'failed',
  );
  if (!st.body.projectionId) throw new Error(`not deployed: ${JSON.stringify(st.body)}`);
  return { projectionId: st.body.projectionId, uploadId };
}

describe.each(STORE_BACKENDS)('open carts: a projection removes a key (IDeletableProjection) on %s', (backend) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({ ...(await envFor(backend)), LANE_SWEEP_MS: '200' });
  });
  afterAll(() => svc?.close());

  it('a checked-out cart: 404, a deleted: true notification on polling and WebSocket, its key freed for another, and a rebuild removes it again', async () => {
    const c = await newTenant(svc.url, `open-carts-${backend}`);
    const limits = await request(`${svc.url}/admin/tenants/${c.tenantId}/limits`, 'PUT', { keysPerProjection: 2 }, admin);
    expect(limits.status).toBe(200);
    const { projectionId: id } = await deploy(svc.url, c);
    const ws = await WsCollector.open(svc.url, id, c.key);
    const append = async (cart: string, eventType: string, data: object = {}) =>
      expect((await c.post('/events', { aggregateId: cart, aggregateType: 'cart', eventType, data })).status).toBe(201);
    const state = (cart: string) => c.get(`/projections/${id}/state/${cart}`);

    await append('cart-1', 'CartOpened');
    await append('cart-1', 'ItemAdded', { sku: 'sku-1' });
    await append('cart-2', 'CartOpened');
    const open = await until(
      () => state('cart-1'),
      (r) => r.status === 200 && r.body.state.items?.length === 1,
    );
    expect(open.body.state).toEqual({ items: ['sku-1'] });
    await until(
      () => state('cart-2'),
      (r) => r.status === 200,
    );

    // Full (2 keys): a third cart waits in !unresolved with KEY_LIMIT.
    await append('cart-3', 'CartOpened');
    const held = await until(
      () => c.get(`/projections/${id}/lanes?held=true`),
      (r) => r.body.lanes?.length === 1,
    );
    expect(held.body.lanes[0]).toMatchObject({ key: '!unresolved', held: { error: expect.stringMatching(/^KEY_LIMIT: /) } });
    expect((await c.post(`/projections/${id}/lanes/!unresolved/skip`, {})).status).toBe(200);

    // cart-1 checked out: its state is removed.
    await append('cart-1', 'CartCheckedOut');
    await until(
      () => state('cart-1'),
      (r) => r.status === 404,
    );
    expect((await state('cart-1')).body).toMatchObject({ error: 'NOT_FOUND' });
    const polled = await until(
      () => c.get(`/projections/${id}/notifications?afterSequence=0`),
      (r) => r.body.notifications?.some((n: any) => n.deleted),
    );
    const removal = polled.body.notifications.find((n: any) => n.deleted);
    expect(removal).toMatchObject({ aggregateId: 'cart-1', stateKey: 'cart-1', state: null, deleted: true });
    expect(polled.body.notifications.filter((n: any) => n.deleted)).toHaveLength(1);
    expect(polled.body.notifications.filter((n: any) => !n.deleted).every((n: any) => !('deleted' in n) && n.state !== null)).toBe(true);
    const pushed = await until(
      async () => ws.messages,
      (m) => m.some((n) => n.deleted),
    );
    expect(pushed.find((n) => n.deleted)).toMatchObject({
      type: 'state_changed',
      stateKey: 'cart-1',
      state: null,
      deleted: true,
      sequence: removal.sequence,
    });
    await ws.close();
    expect((await c.get(`/projections/${id}/keys`)).body.keys).toEqual(['cart-2']);
    const status = await until(
      () => c.get(`/projections/${id}/status?include=lag`),
      (r) => r.body.activeVersion?.applyLag?.laneCount === 1,
    );
    expect(status.body.activeVersion.applyLag.laneCount).toBe(1);

    // The removed key no longer counts: a new cart fits under the limit of 2...
    await append('cart-4', 'CartOpened');
    await until(
      () => state('cart-4'),
      (r) => r.status === 200,
    );
    // ...and the removed cart, opened again, is a new key past it: held, as any new key would be.
    await append('cart-1', 'CartOpened');
    const again = await until(
      () => c.get(`/projections/${id}/lanes?held=true`),
      (r) => r.body.lanes?.length === 1,
    );
    expect(again.body.lanes[0].held.error).toMatch(/^KEY_LIMIT: /);
    expect((await state('cart-1')).status).toBe(404);

    // A rebuild (a redeploy replays the log into a new version) removes the key at the same event: with the limit
    // raised, cart-1 is opened again after its checkout, from a new state (its earlier item gone).
    expect((await request(`${svc.url}/admin/tenants/${c.tenantId}/limits`, 'PUT', { keysPerProjection: 10 }, admin)).status).toBe(200);
    const v2 = await deploy(svc.url, c, OPEN_CARTS.replace('namespace Shop', '// version 2\nnamespace Shop'));
    expect(v2.projectionId).toBe(id);
    await until(
      () => c.get(`/projections/${id}/status`),
      (r) => r.body?.activeVersion?.uploadId === v2.uploadId && !r.body?.pendingVersion,
    );
    const reopened = await until(
      () => state('cart-1'),
      (r) => r.status === 200,
    );
    expect(reopened.body.state).toEqual({ items: [] });
    expect((await c.get(`/projections/${id}/keys`)).body.keys).toEqual(['cart-1', 'cart-2', 'cart-3', 'cart-4']);
  });
});
