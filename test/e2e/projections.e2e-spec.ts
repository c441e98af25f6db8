import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, clientFor, newTenant, ServiceProcess, startService, RunningService } from '../support/service-harness';
import { envFor, postgresServer, SCHEDULER_BACKENDS, schedulerEnv, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { exampleSources } from '../support/runtime-harness';
import { zipSources } from '../support/zip-writer';
import { elapse, until } from '../support/wait';

jest.setTimeout(180_000);
afterAll(() => stopBackends(), 60_000);

const FAST = { LANE_RETRY_BACKOFF_MS: '20,20', LANE_SWEEP_MS: '200', PROJECTION_READ_WAIT_MS: '5000' };

const POISON = `using EventSourcing;
namespace Poison {
  public sealed class Count { public int N { get; set; } public long Last { get; set; } }
  public sealed record Tick(string Key, bool Poison);
  [ProjectionName("poison-counts")]
  public sealed class PoisonProjection : IProjection<Count> {
    public string? ResolveKey(Event e) {
      if (e.EventType != "Tick") return null;
      var key = e.DataAs<Tick>().Key;
      if (key == "boom") throw new System.InvalidOperationException("cannot resolve");
      return key;
    }
    public Count Apply(Count s, Event e) {
      if (e.DataAs<Tick>().Poison) throw new System.InvalidOperationException("poison event");
      s.N++; s.Last = e.Version; return s;
    }
  }
}`;

async function uploadProjection(c: Client, url: string, zip: Buffer, parts: Record<string, string> = {}) {
  const form = new FormData();
  form.append('file', new Blob([zip]), 'p.zip');
  for (const [k, v] of Object.entries(parts)) form.append(k, v);
  const res = await fetch(`${url}/projections/upload`, { method: 'POST', headers: { 'x-api-key': c.key }, body: form });
  return { status: res.status, body: (await res.json()) as any };
}

/** The test's own replay of customer-totals: what every key's state must equal. */
function expectedTotals(orders: { id: string; customer: string; amount: number }[]) {
  const m = new Map<string, { orderCount: number; totalAmount: number }>();
  for (const o of orders) {
    const t = m.get(o.customer) ?? { orderCount: 0, totalAmount: 0 };
    t.orderCount++;
    t.totalAmount += o.amount;
    m.set(o.customer, t);
  }
  return m;
}

async function placeOrders(c: Client, from: number, count: number, customers: number) {
  const orders: { id: string; customer: string; amount: number }[] = [];
  for (let i = from; i < from + count; i++) {
    const o = { id: `order-${i}`, customer: `cust-${i % customers}`, amount: (i % 7) + 1 };
    orders.push(o);
  }
  // 64 at a time: thousands of simultaneous connections overflow the listen backlog of a loaded
  // machine (ECONNRESET), which is not what this suite is about.
  const results: { status: number }[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      for (let k = next++; k < orders.length; k = next++) {
        const o = orders[k];
        results[k] = await c.post('/events', {
          aggregateId: o.id,
          eventType: 'OrderPlaced',
          data: { customerId: o.customer, lines: [{ sku: 'x', qty: 1, price: o.amount }] },
        });
      }
    }),
  );
  const failed = results.filter((r) => r.status !== 201);
  if (failed.length) throw new Error(`${failed.length} appends failed: ${JSON.stringify(failed[0])}`);
  return orders;
}

const COMBOS = STORE_BACKENDS.flatMap((store) => SCHEDULER_BACKENDS.map((scheduler) => [store, scheduler] as const));

describe.each(COMBOS)('projections over HTTP on %s with %s lanes', (backend, scheduler) => {
  let svc: RunningService;
  let t: Client;
  let projectionId: string;
  const orders: { id: string; customer: string; amount: number }[] = [];

  beforeAll(async () => {
    svc = await startService({ ...(await envFor(backend)), ...(await schedulerEnv(scheduler)), ...FAST });
    t = await newTenant(svc.url, 'projections');
    orders.push(...(await placeOrders(t, 0, 120, 12)));
  }, 120_000);
  afterAll(() => svc?.close());

  it('deploys the example projection over history and turns 202 into 200 once caught up', async () => {
    const up = await uploadProjection(t, svc.url, zipSources(exampleSources('customer-totals')), {
      config: JSON.stringify({ notifications: { webhook: { url: 'https://example.com/hook' }, sse: true } }),
    });
    expect(up.status).toBe(202);
    expect(up.body).toMatchObject({
      success: true,
      projectionId: null,
      status: 'compiling',
      notifications: { webhook: { enabled: true, isolated: false }, sse: true },
    });
    const uploadId = up.body.uploadId;
    const st = await until(
      () => t.get(`/projections/${uploadId}/status`),
      (r) => r.body.type === 'runtime',
    );
    expect(st.body).toMatchObject({
      type: 'runtime',
      uploadId,
      id: uploadId,
      status: 'compiled',
      kind: 'projection',
      name: 'customer-totals',
      discovered: [{ className: 'CustomerTotals.CustomerTotalsProjection', stateTypeName: expect.any(String), kind: 'projection' }],
      compiledClassName: 'CustomerTotals.CustomerTotalsProjection',
      activeVersion: { uploadId },
    });
    projectionId = st.body.projectionId;
    expect(projectionId).toEqual(expect.any(String));
    const byStable = await t.get(`/projections/${projectionId}/status`);
    expect(byStable.body.uploadId).toBe(uploadId);

    const first = await t.get(`/projections/${projectionId}/state/cust-3`);
    expect([200, 202]).toContain(first.status);
    if (first.status === 202) expect(first.body).toMatchObject({ projectionId, status: 'catching_up' });
    const read = await until(
      () => t.get(`/projections/${projectionId}/state/cust-3`),
      (r) => r.status === 200,
    );
    const want = expectedTotals(orders).get('cust-3')!;
    expect(read.body).toMatchObject({
      projectionId,
      stateKey: 'cust-3',
      state: { orderCount: want.orderCount, totalAmount: want.totalAmount },
      updatedAt: expect.stringMatching(/Z$/),
    });
    for (const [customer, w] of expectedTotals(orders)) {
      const r = await t.get(`/projections/${projectionId}/state/${customer}`);
      expect(r.body.state).toMatchObject({ orderCount: w.orderCount, totalAmount: w.totalAmount });
    }
  });

  it('reads its own writes with minPosition, and reports lag that cannot lie', async () => {
    const res = await t.post('/events', {
      aggregateId: 'order-live-1',
      eventType: 'OrderPlaced',
      data: { customerId: 'cust-new', lines: [{ sku: 'y', qty: 2, price: 5 }] },
    });
    const read = await t.get(`/projections/${projectionId}/state/cust-new?minPosition=${res.body.position}`);
    expect(read).toMatchObject({ status: 200, body: { state: { orderCount: 1, totalAmount: 10 } } });
    const st = await t.get(`/projections/${projectionId}/status?include=lag`);
    expect(st.body.activeVersion.applyLag).toMatchObject({ totalInboxDepth: 0, heldLanes: 0, laneCount: 13, lagEvents: 0 });
    expect(st.body.activeVersion.applyLag.headPosition).toBeGreaterThanOrEqual(res.body.position);
    expect((await t.get(`/projections/${projectionId}/status`)).body.activeVersion.applyLag).toBeUndefined();
    expect(await t.get(`/projections/${projectionId}/state/nobody`)).toMatchObject({ status: 404, body: { error: 'NOT_FOUND' } });
    expect(await t.get(`/projections/nope/state/cust-1`)).toMatchObject({ status: 404, body: { error: 'NOT_FOUND' } });
  });

  it('lists projections and keys', async () => {
    const list = await t.get('/projections');
    expect(list.body.projections).toEqual([expect.objectContaining({ projectionId, name: 'customer-totals' })]);
    const keys = await t.get(`/projections/${projectionId}/keys?limit=5`);
    expect(keys.body.keys).toEqual(['cust-0', 'cust-1', 'cust-10', 'cust-11', 'cust-2']);
    const next = await t.get(`/projections/${projectionId}/keys?limit=100&after=${keys.body.next}`);
    expect(next.body.keys).toHaveLength(8);
  });

  it('redeploys a changed version beside the active one with no failed read in between', async () => {
    const changed = exampleSources('customer-totals').map((f) => ({
      path: f.path,
      content: f.content.replace('state.OrderCount++;', 'state.OrderCount += 10;'),
    }));
    const up = await uploadProjection(t, svc.url, zipSources(changed));
    const uploadId = up.body.uploadId;
    const seen = new Set<number>();
    let promoted = false;
    const reader = (async () => {
      while (!promoted) {
        const r = await t.get(`/projections/${projectionId}/state/cust-3`);
        seen.add(r.status);
        await elapse(5, 'sampling period of the reads during the promotion');
      }
    })();
    const pending = await until(
      () => t.get(`/projections/${uploadId}/status`),
      (r) => r.body.type === 'runtime',
    );
    expect(pending.body.projectionId).toBe(projectionId);
    const done = await until(
      () => t.get(`/projections/${projectionId}/status`),
      (r) => r.body.activeVersion?.uploadId === uploadId && !r.body.pendingVersion,
    );
    promoted = true;
    await reader;
    expect(done.body.activeVersion.uploadId).toBe(uploadId);
    expect([...seen]).toEqual([200]);
    const want = expectedTotals(orders).get('cust-3')!;
    expect((await t.get(`/projections/${projectionId}/state/cust-3`)).body.state.orderCount).toBe(want.orderCount * 10);
  });

  it('holds only the failing key’s lane, shows it, and goes on when it is skipped', async () => {
    const up = await uploadProjection(t, svc.url, zipSources([{ path: 'Poison.cs', content: POISON }]));
    const st = await until(
      () => t.get(`/projections/${up.body.uploadId}/status`),
      (r) => r.body.type === 'runtime' || r.body.status === 'failed',
    );
    expect(st.body.status).toBe('compiled');
    const pid = st.body.projectionId;
    await t.post('/events', { aggregateId: 'tick-1', eventType: 'Tick', data: { key: 'bad', poison: true } });
    await t.post('/events', { aggregateId: 'tick-2', eventType: 'Tick', data: { key: 'good', poison: false } });
    const after = await t.post('/events', { aggregateId: 'tick-3', eventType: 'Tick', data: { key: 'bad', poison: false } });
    await t.post('/events', { aggregateId: 'tick-4', eventType: 'Tick', data: { key: 'good', poison: false } });
    const good = await until(
      () => t.get(`/projections/${pid}/state/good`),
      (r) => r.status === 200 && r.body.state.n === 2,
    );
    expect(good.body.state.n).toBe(2);
    const held = await until(
      () => t.get(`/projections/${pid}/lanes?held=true`),
      (r) => r.body.lanes.length === 1,
    );
    expect(held.body.lanes[0]).toMatchObject({ key: 'bad', held: { error: expect.stringContaining('poison event'), attempts: 3 } });
    const lag = await t.get(`/projections/${pid}/status?include=lag`);
    expect(lag.body.activeVersion.applyLag).toMatchObject({ heldLanes: 1 });
    expect(lag.body.activeVersion.applyLag.lagEvents).toBeGreaterThan(0);
    expect((await t.post(`/projections/${pid}/lanes/good/skip`, {})).status).toBe(400);
    const skip = await t.post(`/projections/${pid}/lanes/bad/skip`, {});
    expect(skip).toMatchObject({ status: 200, body: { key: 'bad', action: 'skip' } });
    const bad = await until(
      () => t.get(`/projections/${pid}/state/bad?minPosition=${after.body.position}`),
      (r) => r.status === 200,
    );
    expect(bad.body.state).toMatchObject({ n: 1 });
    expect((await t.get(`/projections/${pid}/status?include=lag`)).body.activeVersion.applyLag.heldLanes).toBe(0);
    // An event whose ResolveKey throws goes to a held lane of its own; skipping it lets that lane go on.
    await t.post('/events', { aggregateId: 'tick-5', eventType: 'Tick', data: { key: 'boom', poison: false } });
    const unresolved = await until(
      () => t.get(`/projections/${pid}/lanes?held=true`),
      (r) => r.body.lanes.length === 1,
    );
    expect(unresolved.body.lanes[0]).toMatchObject({ key: '!unresolved', held: { error: expect.stringContaining('cannot resolve') } });
    const tick6 = await t.post('/events', { aggregateId: 'tick-6', eventType: 'Tick', data: { key: 'good', poison: false } });
    expect((await t.get(`/projections/${pid}/state/good?minPosition=${tick6.body.position}`)).body.state.n).toBe(3);
    expect((await t.post(`/projections/${pid}/lanes/${encodeURIComponent('!unresolved')}/skip`, {})).status).toBe(200);
    await until(
      () => t.get(`/projections/${pid}/lanes?held=true`),
      (r) => r.body.lanes.length === 0,
    );
    expect((await t.get(`/projections/${pid}/keys`)).body.keys).toEqual(['bad', 'good']);
    expect((await fetch(`${svc.url}/projections/${pid}`, { method: 'DELETE', headers: { 'x-api-key': t.key } })).status).toBe(204);
    expect((await t.get(`/projections/${pid}/state/good`)).status).toBe(404);
  });

  it('keeps one tenant’s projections from another', async () => {
    const other = await newTenant(svc.url, 'other');
    expect((await other.get(`/projections/${projectionId}/state/cust-3`)).status).toBe(404);
    expect((await other.get('/projections')).body.projections).toEqual([]);
  });
});

describe.each(COMBOS)('a crash mid catch-up on %s with %s lanes', (backend, scheduler) => {
  it('leaves every key’s state equal to a replay after restart', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-proj-crash-'));
    const env = { DATA_DIR: dataDir, ...(await envFor(backend)), ...(await schedulerEnv(scheduler)), ...FAST };
    const svc = new ServiceProcess(env);
    await svc.start();
    const t = await newTenant(svc.url, 'crash');
    const orders = await placeOrders(t, 0, 6000, 300);
    const up = await uploadProjection(t, svc.url, zipSources(exampleSources('customer-totals')));
    const st = await until(
      () => t.get(`/projections/${up.body.uploadId}/status?include=lag`),
      (r) => r.body.type === 'runtime',
    );
    // Mid catch-up, a state read answers 202 (not a partial state).
    const during = await t.get(`/projections/${st.body.projectionId}/state/cust-0`);
    await svc.kill('SIGKILL');
    // The kill really came mid catch-up: not everything was applied yet.
    expect(st.body.activeVersion.applyLag?.lagEvents ?? 1).toBeGreaterThan(0);
    expect(during).toMatchObject({ status: 202, body: { status: 'catching_up' } });

    const again = new ServiceProcess(env);
    await again.start();
    try {
      const c = clientFor(again.url, t.key);
      const pid = (await c.get(`/projections/${up.body.uploadId}/status`)).body.projectionId;
      await until(
        () => c.get(`/projections/${pid}/state/cust-0`),
        (r) => r.status === 200,
      );
      for (const [customer, w] of expectedTotals(orders)) {
        const r = await c.get(`/projections/${pid}/state/${customer}`);
        expect(r.body.state).toMatchObject({ orderCount: w.orderCount, totalAmount: w.totalAmount });
      }
    } finally {
      await again.kill('SIGTERM');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('two service instances sharing PostgreSQL and Redis', () => {
  it('share the lanes, survive a FLUSHALL and a PostgreSQL crash, and end with every state equal to a replay', async () => {
    const { ThrowawayRedis } = await import('../support/throwaway-redis');
    const redis = await ThrowawayRedis.start();
    const env = { ...(await envFor('postgres')), REDIS_URL: redis.url, ...FAST };
    const a = new ServiceProcess(env);
    const b = new ServiceProcess(env);
    await a.start();
    await b.start();
    try {
      const ta = await newTenant(a.url, 'shared');
      const tb = clientFor(b.url, ta.key);
      const up = await uploadProjection(ta, a.url, zipSources(exampleSources('customer-totals')));
      const st = await until(
        () => ta.get(`/projections/${up.body.uploadId}/status`),
        (r) => r.body.type === 'runtime',
      );
      const pid = st.body.projectionId;
      const orders = [...(await placeOrders(ta, 0, 400, 40)), ...(await placeOrders(tb, 400, 400, 40))];
      await redis.flushAll(); // Redis holds no truth: this costs latency, not events
      orders.push(...(await placeOrders(tb, 800, 200, 40)));
      // PostgreSQL dies (immediate stop: no checkpoint) and comes back; lanes resume from their checkpoints.
      const pg = await postgresServer();
      pg.crash();
      pg.restart();
      // Appends work again once the pools have reconnected (a probe event of another type).
      await until(
        () =>
          ta
            .post('/events', { aggregateId: 'probe-1', eventType: 'Probe', data: {} })
            .catch((e) => ({ status: 0, error: String(e), out: a.output.slice(-1500) })),
        (r: any) => r.status === 201,
        30_000,
      );
      orders.push(...(await placeOrders(ta, 1000, 200, 40)));
      const last = await ta.post('/events', {
        aggregateId: 'order-last',
        eventType: 'OrderPlaced',
        data: { customerId: 'cust-0', lines: [{ sku: 'z', qty: 1, price: 1 }] },
      });
      orders.push({ id: 'order-last', customer: 'cust-0', amount: 1 });
      await until(
        () => tb.get(`/projections/${pid}/state/cust-0?minPosition=${last.body.position}`),
        (r) => r.status === 200,
        60_000,
      );
      for (const [customer, w] of expectedTotals(orders)) {
        for (const c of [ta, tb]) {
          const r = await until(
            () => c.get(`/projections/${pid}/state/${customer}?minPosition=${last.body.position}`),
            (x) => x.status === 200,
          );
          expect(r.body.state).toMatchObject({ orderCount: w.orderCount, totalAmount: w.totalAmount });
        }
      }
      // Redis connections of both instances together stay small, whatever the number of keys.
      expect(await redis.clientCount()).toBeLessThanOrEqual(20);
      // The operators' queue board is mounted behind the admin token.
      expect((await fetch(`${a.url}/admin/queues`)).status).toBe(401);
      const board = await fetch(`${a.url}/admin/queues`, { headers: { authorization: 'Bearer test-admin-token-0123456789' } });
      expect(board.status).toBe(200);
    } finally {
      await a.kill('SIGTERM');
      await b.kill('SIGTERM');
      await redis.stop();
    }
  });
});
