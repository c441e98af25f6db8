import { Client, clientFor, newTenant, request, ADMIN_TOKEN, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { until } from '../support/tenant-code';
import { signedOverBytes, WebhookReceiver } from '../support/webhook-receiver';

/**
 * Event webhooks (issue 24, item 2; docs/notifications.md "Event webhooks"): the tenant's log
 * delivered to a real receiver over HTTP, on both stores — filters and order, the Standard Webhooks
 * signature with the tenant's secret, retries then dead letters, suspension and resume, replay from
 * a position, the per-tenant cap, the SSRF guard, and one tenant never reaching another's.
 */
jest.setTimeout(180_000);
afterAll(() => stopBackends(), 60_000);

const FAST = {
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_RETRY_BACKOFF_MS: '50,50',
  WEBHOOK_POLL_MS: '100',
  WEBHOOK_TIMEOUT_MS: '2000',
};
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

const del = (url: string, c: Client, path: string) => request(`${url}${path}`, 'DELETE', undefined, { 'x-api-key': c.key });

async function append(c: Client, aggregateId: string, eventType: string, data: unknown = {}, extra: Record<string, unknown> = {}) {
  const r = await c.post('/events', { aggregateId, eventType, data, ...extra });
  if (r.status !== 201) throw new Error(`append failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.position as number;
}

describe.each(STORE_BACKENDS)('event webhooks (%s)', (backend) => {
  let svc: Awaited<ReturnType<typeof startService>>;
  const receivers: WebhookReceiver[] = [];
  const receiver = async () => {
    const r = await new WebhookReceiver().start();
    receivers.push(r);
    return r;
  };

  beforeAll(async () => {
    svc = await startService({ ...(await envFor(backend)), ...FAST });
  });
  afterAll(async () => {
    for (const r of receivers) await r.stop();
    await svc?.close();
  });

  it('delivers the matching events in position order, each signed with the tenant secret, as the log read shows them', async () => {
    const c = await newTenant(svc.url, 'ewh-order');
    const rx = await receiver();
    // Events before the webhook: afterPosition 0 takes the whole log.
    const early = [
      await append(c, 'order-1', 'Placed', { total: 5, note: 'exact  text ✓' }, { metadata: { source: 'test' }, correlationId: 'corr-1' }),
      await append(c, 'cart-1', 'Placed'),
      await append(c, 'order-1', 'Viewed'),
    ];
    const created = await c.post('/event-webhooks', {
      url: rx.url,
      afterPosition: 0,
      aggregateTypes: ['order'],
      eventTypes: ['Placed', 'Paid'],
      name: 'orders to the warehouse',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      webhookId: expect.any(String),
      name: 'orders to the warehouse',
      url: rx.url,
      aggregateTypes: ['order'],
      eventTypes: ['Placed', 'Paid'],
      status: 'active',
      secret: expect.stringMatching(/^whsec_/),
    });
    const id = created.body.webhookId;
    rx.secrets = [created.body.secret];
    const later: number[] = [];
    // The caller's trace context rides with its event to the receiver (tracing is off in this service).
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const traced = await c.post(
      '/events',
      { aggregateId: 'order-7', eventType: 'Placed', data: {} },
      { traceparent, tracestate: 'vendor=a1' },
    );
    expect(traced.status).toBe(201);
    later.push(traced.body.position);
    for (let i = 2; i <= 6; i++) {
      later.push(await append(c, `order-${i}`, 'Placed', { i }));
      later.push(await append(c, `order-${i}`, i % 2 ? 'Paid' : 'Cancelled'));
      later.push(await append(c, `cart-${i}`, 'Paid'));
    }
    const all = [...early, ...later];
    const expected: number[] = [];
    const events = new Map<number, any>();
    for (const aggregateId of [
      'order-1',
      'order-2',
      'order-3',
      'order-4',
      'order-5',
      'order-6',
      'order-7',
      'cart-1',
      'cart-2',
      'cart-3',
      'cart-4',
      'cart-5',
      'cart-6',
    ]) {
      for (const e of (await c.get(`/events/${aggregateId}`)).body.events) events.set(e.position, e);
    }
    for (const p of all) {
      const e = events.get(p);
      if (e.aggregateType === 'order' && ['Placed', 'Paid'].includes(e.eventType)) expected.push(p);
    }
    expect(expected.length).toBe(9); // order-1..7 Placed, order-3 and order-5 Paid
    await until(
      () => rx.sequences(),
      (s) => s.length >= expected.length,
      30_000,
      'matching events delivered',
    );
    expect(rx.sequences()).toEqual(expected);
    for (const a of rx.accepted) {
      const e = events.get(a.sequence);
      expect(a.body).toEqual({ type: 'event', ...e });
      expect(a.headers['webhook-id']).toBe(`msg_${id}_${a.sequence}`);
      expect(a.headers['webhook-subscription-id']).toBe(id);
      expect(a.verifiedBy).toBe(0);
      expect(signedOverBytes(created.body.secret, a.headers, a.raw)).toBe(true);
    }
    const tracedDelivery = rx.accepted.find((a) => a.sequence === traced.body.position)!;
    expect([tracedDelivery.headers.traceparent, tracedDelivery.headers.tracestate]).toEqual([traceparent, 'vendor=a1']);
    expect(rx.accepted.filter((a) => a.headers.traceparent !== undefined)).toHaveLength(1);
    // The payload's own text, byte for byte (not re-encoded).
    expect(rx.accepted[0].raw.toString('utf8')).toContain('"data":{"total":5,"note":"exact  text ✓"}');
    expect(rx.accepted[0].body).toMatchObject({ metadata: { source: 'test' }, correlationId: 'corr-1', aggregateType: 'order' });
    // The cursor passes the filtered-out tail too; nothing pending.
    const status = await until(
      async () => (await c.get(`/event-webhooks/${id}`)).body,
      (b) => b.deliveredPosition === all[all.length - 1],
      10_000,
      'cursor at the head',
    );
    expect(status).toMatchObject({ status: 'active', pendingEvents: 0, deadDeliveries: 0, headPosition: all[all.length - 1], attempts: 0 });
    const listed = await c.get('/event-webhooks');
    expect(listed.status).toBe(200);
    expect(listed.body.eventWebhooks.map((w: any) => w.webhookId)).toEqual([id]);
    expect(listed.body.eventWebhooks[0]).not.toHaveProperty('secret');
  });

  it('starts at the head by default, and never delivers or shows one tenant’s events to another', async () => {
    const a = await newTenant(svc.url, 'ewh-a');
    const b = await newTenant(svc.url, 'ewh-b');
    const rx = await receiver();
    await append(a, 'acct-1', 'Opened');
    const made = await a.post('/event-webhooks', { url: rx.url });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ deliveredPosition: 1, aggregateTypes: null, eventTypes: null });
    rx.secrets = [made.body.secret];
    await append(b, 'acct-1', 'Opened');
    await append(b, 'acct-1', 'Closed');
    const p = await append(a, 'acct-1', 'Closed');
    await until(
      () => rx.sequences(),
      (s) => s.length >= 1,
      30_000,
    );
    expect(rx.accepted.map((x) => [x.sequence, x.body.eventType])).toEqual([[p, 'Closed']]);
    // Another tenant's key finds none of it.
    expect((await b.get(`/event-webhooks/${made.body.webhookId}`)).status).toBe(404);
    expect((await b.get('/event-webhooks')).body).toEqual({ eventWebhooks: [] });
    expect((await del(svc.url, b, `/event-webhooks/${made.body.webhookId}`)).status).toBe(404);
    expect((await b.post(`/event-webhooks/${made.body.webhookId}/replay`, { fromPosition: 1 })).status).toBe(404);
    // The shared secret is the tenant's: the other tenant's is another.
    const other = await b.post('/event-webhooks', { url: rx.url });
    expect(other.body.secret).not.toBe(made.body.secret);
  });

  it('retries a failing receiver, dead-letters after the schedule and moves on; replays from a position', async () => {
    const c = await newTenant(svc.url, 'ewh-dead');
    const rx = await receiver();
    const made = await c.post('/event-webhooks', { url: rx.url });
    const id = made.body.webhookId;
    rx.secrets = [made.body.secret];
    // A new tenant's positions start at 1: the receiver is told before the events exist.
    rx.failFirst.set(1, 2); // two failures, then accepted: within the schedule (3 attempts)
    rx.failFirst.set(2, 99); // never: dead after 3 attempts
    const p1 = await append(c, 'item-1', 'A');
    const p2 = await append(c, 'item-1', 'B');
    const p3 = await append(c, 'item-1', 'C');
    expect([p1, p2, p3]).toEqual([1, 2, 3]);
    await until(
      () => rx.sequences(),
      (s) => s.includes(p3),
      30_000,
      'the event after the dead letter delivered',
    );
    expect(rx.sequences()).toEqual([p1, p3]);
    expect(rx.attempts.get(p1)).toBe(3);
    expect(rx.attempts.get(p2)).toBe(3);
    const dead = await c.get(`/event-webhooks/${id}/deliveries?status=dead`);
    expect(dead.status).toBe(200);
    expect(dead.body.deliveries).toEqual([
      { position: p2, eventId: expect.any(String), status: 'dead', attempts: 3, lastError: 'HTTP 500', deadAt: expect.any(String) },
    ]);
    expect((await c.get(`/event-webhooks/${id}/deliveries?status=pending`)).body.error).toBe('VALIDATION_FAILED');
    // The receiver answered before the cursor was written: wait for the write.
    const status = await until(
      async () => (await c.get(`/event-webhooks/${id}`)).body,
      (b) => b.deliveredPosition === p3,
      10_000,
      'cursor past the last delivery',
    );
    expect(status).toMatchObject({ status: 'active', deadDeliveries: 1, deliveredPosition: p3, lastError: 'HTTP 500' });

    // Replay from the dead one: it and everything after it again, same webhook-ids.
    rx.failFirst.delete(p2);
    const replay = await c.post(`/event-webhooks/${id}/replay`, { fromPosition: p2 });
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ deliveredPosition: p2 - 1, deadDeliveries: 0 });
    await until(
      () => rx.sequences(),
      (s) => s.length >= 4,
      30_000,
      'replayed events',
    );
    expect(rx.sequences()).toEqual([p1, p3, p2, p3]);
    expect(rx.accepted[3].headers['webhook-id']).toBe(rx.accepted[1].headers['webhook-id']);
    expect((await c.get(`/event-webhooks/${id}/deliveries`)).body.deliveries).toEqual([]);
    for (const bad of [{}, { fromPosition: 0 }, { fromPosition: 'x' }, { fromPosition: p3 + 2 }]) {
      const r = await c.post(`/event-webhooks/${id}/replay`, bad);
      expect([r.status, r.body.error]).toEqual([400, 'VALIDATION_FAILED']);
    }
  });

  it('suspends after three dead letters in a row and resumes from its cursor', async () => {
    const c = await newTenant(svc.url, 'ewh-suspend');
    const rx = await receiver();
    const made = await c.post('/event-webhooks', { url: rx.url });
    const id = made.body.webhookId;
    rx.secrets = [made.body.secret];
    rx.down = true;
    const ps: number[] = [];
    for (let i = 1; i <= 4; i++) ps.push(await append(c, 'item-1', `E${i}`));
    const suspended = await until(
      async () => (await c.get(`/event-webhooks/${id}`)).body,
      (b) => b.status === 'suspended',
      30_000,
      'suspended',
    );
    expect(suspended).toMatchObject({ deliveredPosition: ps[2], deadDeliveries: 3, pendingEvents: 1, suspendedAt: expect.any(String) });
    expect(suspended.suspendedReason).toMatch(/^DEAD_LETTERS: /);
    expect((await c.post(`/event-webhooks/${id}/replay`, { fromPosition: 1 })).body.error).toBe('WEBHOOK_SUSPENDED');
    rx.down = false;
    const attemptsBefore = [...rx.attempts.values()].reduce((a, b) => a + b, 0);
    const resumed = await c.post(`/event-webhooks/${id}/resume`, {});
    expect(resumed.status).toBe(200);
    expect(resumed.body.status).toBe('active');
    await until(
      () => rx.sequences(),
      (s) => s.length >= 1,
      30_000,
      'delivery after resume',
    );
    expect(rx.sequences()).toEqual([ps[3]]);
    expect([...rx.attempts.values()].reduce((a, b) => a + b, 0)).toBe(attemptsBefore + 1);
    expect((await c.post(`/event-webhooks/${id}/resume`, {})).body.error).toBe('WEBHOOK_NOT_SUSPENDED');
  });

  it('holds the tenant to its eventWebhooks limit and refuses bad bodies with stable codes', async () => {
    const c = await newTenant(svc.url, 'ewh-cap');
    const rx = await receiver();
    const set = await request(`${svc.url}/admin/tenants/${c.tenantId}/limits`, 'PUT', { eventWebhooks: 2 }, admin);
    expect(set.status).toBe(200);
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) ids.push((await c.post('/event-webhooks', { url: rx.url })).body.webhookId);
    const over = await c.post('/event-webhooks', { url: rx.url });
    expect(over.status).toBe(403);
    expect(over.body).toMatchObject({ error: 'QUOTA_EXCEEDED', quota: 'eventWebhooks', limit: 2, used: 2 });
    expect((await c.get('/event-webhooks')).body.eventWebhooks).toHaveLength(2);
    expect((await del(svc.url, c, `/event-webhooks/${ids[0]}`)).status).toBe(204);
    expect((await c.get(`/event-webhooks/${ids[0]}`)).status).toBe(404);
    expect((await c.post('/event-webhooks', { url: rx.url })).status).toBe(201);
    for (const bad of [
      {},
      { url: 5 },
      { url: rx.url, afterPosition: -1 },
      { url: rx.url, afterPosition: 99 },
      { url: rx.url, aggregateTypes: [] },
      { url: rx.url, aggregateTypes: 'order' },
      { url: rx.url, eventTypes: Array.from({ length: 21 }, (_, i) => `T${i}`) },
      { url: rx.url, name: '' },
    ]) {
      const r = await c.post('/event-webhooks', bad);
      expect([JSON.stringify(bad), r.status, r.body.error]).toEqual([JSON.stringify(bad), 400, 'VALIDATION_FAILED']);
    }
    expect((await c.post('/event-webhooks', { url: 'ftp://example.com/x' })).body.error).toBe('WEBHOOK_URL_REFUSED');
  });
});

describe('event webhooks: the SSRF guard', () => {
  let svc: Awaited<ReturnType<typeof startService>>;
  beforeAll(async () => {
    svc = await startService({ WEBHOOK_POLL_MS: '100' });
  });
  afterAll(async () => svc?.close());

  it('refuses URLs that are or resolve to non-public addresses, as for projection webhooks', async () => {
    const c = clientFor(svc.url, (await newTenant(svc.url, 'ewh-ssrf')).key);
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://10.0.0.5/hook',
      'http://[::1]/hook',
      'http://localhost/hook',
      'https://user:pw@example.com/hook',
    ]) {
      const r = await c.post('/event-webhooks', { url });
      expect([url, r.status, r.body.error]).toEqual([url, 400, 'WEBHOOK_URL_REFUSED']);
    }
    expect((await c.get('/event-webhooks')).body.eventWebhooks).toEqual([]);
  });
});
