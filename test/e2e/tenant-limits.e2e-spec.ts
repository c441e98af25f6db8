import { ADMIN_TOKEN, Client, newTenant, request, RunningService, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { exampleSources } from '../support/runtime-harness';
import { WsCollector } from '../support/stream-clients';
import { WebhookReceiver } from '../support/webhook-receiver';
import { zipSources } from '../support/zip-writer';
import { elapse, until } from '../support/wait';

/**
 * Issue 15: limits a tenant cannot pass (projections, keys per projection, pending webhook
 * deliveries: a suspended endpoint and its resume) and retention as documented (the newest N kept,
 * no pin by a suspended or dead endpoint, expiring dead letters, replays of pruned notifications).
 * The whole service over HTTP with a real webhook receiver, on both stores.
 */
jest.setTimeout(240_000);
afterAll(() => stopBackends(), 60_000);

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const BASE = { LANE_SWEEP_MS: '200', WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_POLL_MS: '100' };

async function setLimits(url: string, tenantId: string, overrides: unknown) {
  const res = await request(`${url}/admin/tenants/${tenantId}/limits`, 'PUT', overrides, admin);
  if (res.status !== 200) throw new Error(`limits not set: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function uploadProjection(c: Client, url: string, config?: unknown) {
  const form = new FormData();
  form.append('file', new Blob([zipSources(exampleSources('customer-totals'))]), 'p.zip');
  if (config !== undefined) form.append('config', JSON.stringify(config));
  const res = await fetch(`${url}/projections/upload`, { method: 'POST', headers: { 'x-api-key': c.key }, body: form });
  return { status: res.status, body: (await res.json()) as any };
}

async function compiled(c: Client, uploadId: string) {
  return (
    await until(
      () => c.get(`/projections/${uploadId}/status`),
      (r) => r.body?.status === 'compiled' || r.body?.status === 'failed',
    )
  ).body;
}

async function deployed(c: Client, uploadId: string): Promise<string> {
  const s = await compiled(c, uploadId);
  if (!s.projectionId) throw new Error(`not deployed: ${JSON.stringify(s)}`);
  return s.projectionId;
}

/** One order each, appended one after another (so their positions, and the keys' order, are known). */
async function placeOrders(c: Client, customers: string[], from = 0) {
  for (const [i, customerId] of customers.entries()) {
    const r = await c.post('/events', {
      aggregateId: `order-${from + i}`,
      eventType: 'OrderPlaced',
      data: { customerId, lines: [{ sku: 'x', qty: 1, price: 1 }] },
    });
    if (r.status !== 201) throw new Error(`append failed: ${JSON.stringify(r)}`);
  }
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const times = (n: number, v: string) => Array.from({ length: n }, () => v);

describe.each(STORE_BACKENDS)('tenant limits on %s', (backend) => {
  let svc: RunningService;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    // A failed attempt is retried after a minute: a failing receiver's deliveries stay pending meanwhile.
    svc = await startService({ ...(await envFor(backend)), ...BASE, WEBHOOK_RETRY_BACKOFF_MS: '60000' });
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await svc?.close();
    await receiver?.stop();
  });

  it('refuses a projection past the tenant’s projections limit with 403 QUOTA_EXCEEDED, and still takes redeploys', async () => {
    const c = await newTenant(svc.url, `projections-${backend}`);
    expect((await setLimits(svc.url, c.tenantId, { projections: 2 })).limits.projections).toBe(2);
    for (const name of ['p-a', 'p-b']) await deployed(c, (await uploadProjection(c, svc.url, { name })).body.uploadId);

    const third = await uploadProjection(c, svc.url, { name: 'p-c' });
    expect(third.status).toBe(403);
    expect(third.body).toMatchObject({ error: 'QUOTA_EXCEEDED', quota: 'projections', limit: 2, used: 2 });
    // Named by its class ([ProjectionName]) only at compile: the deploy refuses it, the upload fails with the code.
    const unnamed = await uploadProjection(c, svc.url);
    expect(unnamed.status).toBe(202);
    const failed = await compiled(c, unnamed.body.uploadId);
    expect(failed).toMatchObject({ status: 'failed', projectionId: null, compilationError: expect.stringMatching(/^QUOTA_EXCEEDED: /) });
    // A redeploy of an existing name is not a new projection.
    const again = await uploadProjection(c, svc.url, { name: 'p-a' });
    expect(again.status).toBe(202);
    expect((await compiled(c, again.body.uploadId)).status).toBe('compiled');
    expect((await c.get('/projections')).body.projections.map((p: any) => p.name).sort()).toEqual(['p-a', 'p-b']);
  });

  it('holds events for keys past keysPerProjection in !unresolved with KEY_LIMIT, and hands them on after the limit is raised', async () => {
    const c = await newTenant(svc.url, `keys-${backend}`);
    await setLimits(svc.url, c.tenantId, { keysPerProjection: 3 });
    const projectionId = await deployed(c, (await uploadProjection(c, svc.url, { name: 'keys' })).body.uploadId);
    await placeOrders(c, ['cust-0', 'cust-1', 'cust-2', 'cust-3', 'cust-4', 'cust-0']);

    const held = await until(
      () => c.get(`/projections/${projectionId}/lanes?held=true`),
      (r) => r.body.lanes?.length === 1,
    );
    expect(held.body.lanes[0]).toMatchObject({
      key: '!unresolved',
      held: { position: expect.any(Number), error: expect.stringMatching(/^KEY_LIMIT: /) },
    });
    // Known keys go on: cust-0 took its second order.
    await until(
      () => c.get(`/projections/${projectionId}/state/cust-0`),
      (r) => r.status === 200 && (r.body.state.OrderCount ?? r.body.state.orderCount) === 2,
    );
    expect((await c.get(`/projections/${projectionId}/keys`)).body.keys).toEqual(['cust-0', 'cust-1', 'cust-2']);
    expect((await c.get(`/projections/${projectionId}/state/cust-3`)).status).toBe(404);

    // Retried without a higher limit: still held, still KEY_LIMIT.
    expect((await c.post(`/projections/${projectionId}/lanes/!unresolved/retry`, {})).status).toBe(200);
    await elapse(1_000, 'time for the retried lane to run, which stays held');
    const still = await until(
      () => c.get(`/projections/${projectionId}/lanes?held=true`),
      (r) => r.body.lanes?.length === 1,
    );
    expect(still.body.lanes[0].held.error).toMatch(/^KEY_LIMIT: /);
    expect((await c.get(`/projections/${projectionId}/state/cust-3`)).status).toBe(404);

    await setLimits(svc.url, c.tenantId, { keysPerProjection: 10 });
    expect((await c.post(`/projections/${projectionId}/lanes/!unresolved/retry`, {})).status).toBe(200);
    await until(
      () => c.get(`/projections/${projectionId}/keys`),
      (r) => r.body.keys?.length === 5,
    );
    const cust4 = await until(
      () => c.get(`/projections/${projectionId}/state/cust-4`),
      (r) => r.status === 200,
    );
    expect(cust4.body.state.OrderCount ?? cust4.body.state.orderCount).toBe(1);
    expect((await c.get(`/projections/${projectionId}/lanes?held=true`)).body.lanes).toEqual([]);
  });

  it('suspends a failing endpoint past pendingDeliveries (polling and streams unaffected) and resumes it from the oldest undelivered sequence', async () => {
    const c = await newTenant(svc.url, `pending-${backend}`);
    await setLimits(svc.url, c.tenantId, { pendingDeliveries: 3 });
    const up = await uploadProjection(c, svc.url, { name: 'suspended', webhook: { url: receiver.url } });
    receiver.secrets = [up.body.notifications.webhook.secret];
    const projectionId = await deployed(c, up.body.uploadId);
    const ws = await WsCollector.open(svc.url, projectionId, c.key, 0);
    receiver.down = true;
    await placeOrders(c, times(10, 'cust-s'));

    const status = await until(
      () => c.get(`/projections/${up.body.uploadId}/status`),
      (r) => r.body.webhook?.status === 'suspended',
    );
    expect(status.body.webhook).toMatchObject({
      status: 'suspended',
      pendingDeliveries: 0,
      pendingDeliveriesLimit: 3,
      resumeFromSequence: 1,
      suspendedReason: expect.stringMatching(/^PENDING_LIMIT: /),
      suspendedAt: expect.any(String),
    });
    expect((await c.get(`/projections/${projectionId}/webhook`)).body).toEqual({ projectionId, webhook: status.body.webhook });
    expect((await c.get(`/projections/${projectionId}/webhook/deliveries?status=pending`)).body.deliveries).toEqual([]);
    // Deliveries stop: nothing more is attempted while suspended.
    const attempts = [...receiver.attempts.values()].reduce((a, b) => a + b, 0);
    await elapse(500, 'time for a delivery attempt, which none may make while suspended');
    expect([...receiver.attempts.values()].reduce((a, b) => a + b, 0)).toBe(attempts);
    // Polling and the stream go on.
    await until(
      () => c.get(`/projections/${projectionId}/notifications?afterSequence=0`),
      (r) => r.body.notifications?.length === 10,
    );
    await until(
      () => ws.sequences().length,
      (n) => n === 10,
    );
    expect(ws.sequences()).toEqual(range(1, 10));
    // Dead letters cannot be replayed into a suspended endpoint.
    expect(await c.post(`/projections/${projectionId}/webhook/deliveries/replay`, {})).toMatchObject({
      status: 409,
      body: { error: 'WEBHOOK_SUSPENDED' },
    });

    receiver.down = false;
    const resumed = await c.post(`/projections/${projectionId}/webhook/resume`, {});
    expect(resumed).toEqual({
      status: 200,
      body: { projectionId, webhook: { status: 'active' }, afterSequence: 0, skipped: 0, resumedAt: expect.any(String) },
    });
    await until(
      () => receiver.sequences().length,
      (n) => n >= 10,
    );
    expect(receiver.sequences()).toEqual(range(1, 10));
    expect((await c.get(`/projections/${projectionId}/webhook`)).body.webhook).toMatchObject({
      status: 'active',
      resumeFromSequence: null,
    });
    expect(await c.post(`/projections/${projectionId}/webhook/resume`, {})).toMatchObject({
      status: 409,
      body: { error: 'WEBHOOK_NOT_SUSPENDED' },
    });
    await ws.close();
  });
});

describe.each(STORE_BACKENDS)('retention on %s', (backend) => {
  let svc: RunningService;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    svc = await startService({
      ...(await envFor(backend)),
      ...BASE,
      // The newest 3 always stay; older ones go at once (age 0).
      NOTIFICATIONS_KEEP_COUNT: '3',
      NOTIFICATIONS_KEEP_MS: '0',
      NOTIFICATIONS_RETENTION_SWEEP_MS: '100',
      WEBHOOK_RETRY_BACKOFF_MS: '1500',
      WEBHOOK_DEAD_KEEP_MS: '6000',
    });
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await svc?.close();
    await receiver?.stop();
  });

  it('keeps the newest NOTIFICATIONS_KEEP_COUNT whatever their age', async () => {
    const c = await newTenant(svc.url, `keep-${backend}`);
    const projectionId = await deployed(c, (await uploadProjection(c, svc.url, { name: 'kept' })).body.uploadId);
    await placeOrders(c, ['a', 'b', 'c', 'a', 'b', 'c', 'a', 'b']);
    const expired = await until(
      () => c.get(`/projections/${projectionId}/notifications?afterSequence=0`),
      (r) => r.status === 410,
    );
    await elapse(500, 'several sweeps more');
    expect((await c.get(`/projections/${projectionId}/notifications?afterSequence=0`)).body).toMatchObject({
      error: 'CURSOR_EXPIRED',
      oldestSequence: 6,
    });
    expect(expired.body.oldestSequence).toBeLessThanOrEqual(6);
    expect(
      (await c.get(`/projections/${projectionId}/notifications?afterSequence=5`)).body.notifications.map((n: any) => n.sequence),
    ).toEqual([6, 7, 8]);
  });

  it('lets a dead delivery’s notification go, answers its replay with NOTIFICATION_EXPIRED, and expires dead deliveries', async () => {
    const c = await newTenant(svc.url, `dead-${backend}`);
    const up = await uploadProjection(c, svc.url, { name: 'dead', webhook: { url: receiver.url } });
    receiver.secrets = [up.body.notifications.webhook.secret];
    const projectionId = await deployed(c, up.body.uploadId);
    const before = receiver.accepted.length;
    receiver.failFirst.set(1, 1_000);
    await placeOrders(c, times(6, 'cust-d'));
    await until(
      () => receiver.accepted.length - before,
      (n) => n >= 5,
    );
    const [dead] = (await c.get(`/projections/${projectionId}/webhook/deliveries?status=dead`)).body.deliveries;
    expect(dead).toMatchObject({ sequence: 1, status: 'dead' });
    // Not pinned by the dead letter: the log is down to the newest 3.
    await until(
      () => c.get(`/projections/${projectionId}/notifications?afterSequence=0`),
      (r) => r.status === 410 && r.body.oldestSequence === 4,
    );

    expect(await c.post(`/projections/${projectionId}/webhook/deliveries/replay`, { sequence: 1 })).toMatchObject({
      status: 410,
      body: { error: 'NOTIFICATION_EXPIRED', sequence: 1, oldestSequence: 4 },
    });
    expect(await c.post(`/projections/${projectionId}/webhook/deliveries/replay`, {})).toEqual({
      status: 200,
      body: { projectionId, replayed: 0, expired: 1, oldestSequence: 4 },
    });
    expect(
      (await c.get(`/projections/${projectionId}/webhook/deliveries?status=dead`)).body.deliveries.map((d: any) => d.sequence),
    ).toEqual([1]);
    // WEBHOOK_DEAD_KEEP_MS (6 s here) after it died, it is gone.
    await until(
      () => c.get(`/projections/${projectionId}/webhook/deliveries?status=dead`),
      (r) => r.body.deliveries?.length === 0,
      30_000,
    );
    receiver.failFirst.clear();
  });

  it('does not let a suspended endpoint pin the log, and answers its resume from a removed sequence with CURSOR_EXPIRED', async () => {
    const c = await newTenant(svc.url, `gap-${backend}`);
    await setLimits(svc.url, c.tenantId, { pendingDeliveries: 2 });
    const gapReceiver = await new WebhookReceiver().start();
    try {
      const up = await uploadProjection(c, svc.url, { name: 'gap', webhook: { url: gapReceiver.url } });
      gapReceiver.secrets = [up.body.notifications.webhook.secret];
      const projectionId = await deployed(c, up.body.uploadId);
      gapReceiver.down = true;
      await placeOrders(c, times(10, 'cust-g'));
      await until(
        () => c.get(`/projections/${projectionId}/webhook`),
        (r) => r.body.webhook?.status === 'suspended',
      );
      // Retention passes the suspended endpoint's cursor: the newest 3 stay.
      await until(
        () => c.get(`/projections/${projectionId}/notifications?afterSequence=0`),
        (r) => r.status === 410 && r.body.oldestSequence === 8,
      );

      gapReceiver.down = false;
      expect(await c.post(`/projections/${projectionId}/webhook/resume`, {})).toMatchObject({
        status: 410,
        body: { error: 'CURSOR_EXPIRED', oldestSequence: 8, afterSequence: 0 },
      });
      expect((await c.get(`/projections/${projectionId}/webhook`)).body.webhook.status).toBe('suspended');
      expect(await c.post(`/projections/${projectionId}/webhook/resume`, { afterSequence: 99 })).toMatchObject({
        status: 400,
        body: { error: 'VALIDATION_FAILED' },
      });
      const resumed = await c.post(`/projections/${projectionId}/webhook/resume`, { afterSequence: 7 });
      expect(resumed).toMatchObject({ status: 200, body: { projectionId, afterSequence: 7, skipped: 7 } });
      await until(
        () => gapReceiver.sequences().length,
        (n) => n >= 3,
      );
      expect(gapReceiver.sequences()).toEqual([8, 9, 10]);
    } finally {
      await gapReceiver.stop();
    }
  });
});
