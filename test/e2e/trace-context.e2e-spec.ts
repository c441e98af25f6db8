import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { tracingOn } from '../../src/observability/tracing/tracing';
import { parseScrape } from '../support/prometheus-text';
import { Client, clientFor, newTenant, RunningService, ServiceProcess, startService } from '../support/service-harness';
import { envFor, postgresServer, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { SseCollector, WsCollector } from '../support/stream-clients';
import { deployReducer, exampleSources, projectionActive, until, uploadProjection } from '../support/tenant-code';
import { WebhookReceiver } from '../support/webhook-receiver';

jest.setTimeout(240_000);
afterAll(() => stopBackends(), 60_000);

const FAST = {
  LANE_SWEEP_MS: '200',
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  // Long enough for a receiver that is down across a restart not to dead-letter the delivery.
  WEBHOOK_RETRY_BACKOFF_MS: Array(40).fill('250').join(','),
  WEBHOOK_POLL_MS: '100',
};

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const TP = `00-${TRACE_ID}-${CALLER_SPAN}-01`;
const TS = 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE';

const order = (id: string, customerId: string) => ({
  aggregateId: id,
  eventType: 'OrderPlaced',
  data: { customerId, lines: [{ sku: 'x', qty: 1, price: 3 }] },
});

// No provider is registered in this file: the service as `npm start` runs it without an OTLP endpoint.
describe.each(STORE_BACKENDS)('a caller trace context with tracing off, on %s', (backend) => {
  let env: Record<string, string>;
  let dataDir: string;
  let svc: RunningService;
  let c: Client;
  let receiver: WebhookReceiver;
  let projectionId: string;
  let ws: WsCollector;
  let sse: SseCollector;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-trace-'));
    env = { ...(await envFor(backend)), ...FAST, DATA_DIR: dataDir };
    svc = await startService(env);
    c = await newTenant(svc.url, `trace-${backend}`);
    receiver = await new WebhookReceiver().start();
    await deployReducer(svc.url, c.key, 'orders', exampleSources('orders'));
    const up = await uploadProjection(svc.url, c.key, exampleSources('customer-totals'), {
      notifications: { webhook: { url: receiver.url }, sse: true },
    });
    receiver.secrets = [up.notifications.webhook.secret];
    projectionId = await projectionActive(svc.url, c.key, up.uploadId);
    ws = await WsCollector.open(svc.url, projectionId, c.key);
    sse = await SseCollector.open(svc.url, projectionId, c.key);
  });
  afterAll(async () => {
    await ws?.close();
    sse?.close();
    await svc?.close();
    await receiver?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const hookFor = (aggregateId: string) =>
    until(
      () => receiver.accepted.find((h) => h.body.aggregateId === aggregateId),
      (h) => h !== undefined,
      60_000,
      `webhook of ${aggregateId}`,
    ).then((h) => h!);
  const notificationFor = (aggregateId: string) =>
    until(
      async () =>
        (await c.get(`/projections/${projectionId}/notifications?limit=1000`)).body.notifications.find(
          (n: any) => n.aggregateId === aggregateId,
        ),
      (n) => n !== undefined,
      60_000,
      `notification of ${aggregateId}`,
    );

  it('stores it with the events and carries it to the read, the notification log, the streams and the webhook', async () => {
    expect(tracingOn()).toBe(false);
    const r = await c.post('/events', order('order-t1', 'cust-t'), { traceparent: TP, tracestate: TS });
    expect(r.status).toBe(201);
    expect(r.body.state).toBeDefined(); // the reducer ran
    const b = await c.post(
      '/events/batch',
      {
        aggregateId: 'order-t2',
        events: [order('', '').data, order('', '').data].map((data) => ({
          eventType: 'OrderPlaced',
          data: { ...data, customerId: 'cust-t' },
        })),
      },
      { traceparent: TP },
    );
    expect(b.status).toBe(201);

    const read1 = await c.get('/events/order-t1');
    expect(read1.body.events[0]).toMatchObject({ aggregateId: 'order-t1', traceparent: TP, tracestate: TS });
    const read2 = await c.get('/events/order-t2');
    expect(read2.body.events.map((e: any) => [e.traceparent, 'tracestate' in e])).toEqual([
      [TP, false],
      [TP, false],
    ]);

    // The webhook POST carries the caller's traceparent as sent (no span of the service's own), and its tracestate.
    const hook = await hookFor('order-t1');
    expect(hook.headers.traceparent).toBe(TP);
    expect(hook.headers.tracestate).toBe(TS);
    expect(hook.body).toMatchObject({ traceparent: TP, tracestate: TS, traceId: TRACE_ID });
    const hook2 = await hookFor('order-t2');
    expect(hook2.headers.traceparent).toBe(TP);
    expect(hook2.headers.tracestate).toBeUndefined();

    expect(await notificationFor('order-t1')).toMatchObject({ traceparent: TP, tracestate: TS });
    await until(
      () => [ws.messages, sse.events.filter((e) => e.event === 'state_changed').map((e) => e.data)],
      ([w, s]) => w.some((m: any) => m.aggregateId === 'order-t1') && s.some((m: any) => m.aggregateId === 'order-t1'),
      30_000,
      'stream messages',
    );
    const fromWs = ws.messages.find((m) => m.aggregateId === 'order-t1');
    const fromSse = sse.events.find((e) => e.event === 'state_changed' && e.data.aggregateId === 'order-t1')!.data;
    for (const m of [fromWs, fromSse])
      expect(m).toMatchObject({ type: 'state_changed', traceparent: TP, tracestate: TS, traceId: TRACE_ID });
  });

  it('ignores an invalid traceparent (and its tracestate): the append is stored without trace context', async () => {
    const r = await c.post('/events', order('order-bad', 'cust-bad'), { traceparent: TP.toUpperCase(), tracestate: TS });
    expect(r.status).toBe(201);
    const e = (await c.get('/events/order-bad')).body.events[0];
    expect('traceparent' in e || 'tracestate' in e).toBe(false);
    const hook = await hookFor('order-bad');
    expect(hook.headers.traceparent).toBeUndefined();
    expect(hook.headers.tracestate).toBeUndefined();
    expect(Object.keys(hook.body).filter((k) => k.startsWith('trace'))).toEqual([]);
    const n = await notificationFor('order-bad');
    expect(Object.keys(n).filter((k) => k.startsWith('trace'))).toEqual([]);
  });

  it('keeps a notification’s trace across a restart: the delivery made by the next process carries it', async () => {
    const tp = `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-00`;
    receiver.down = true;
    expect((await c.post('/events', order('order-restart', 'cust-r'), { traceparent: tp })).status).toBe(201);
    const n = await notificationFor('order-restart');
    expect(n.traceparent).toBe(tp);
    // A first attempt was made (and refused) by this process.
    await until(
      () => receiver.attempts.get(n.sequence) ?? 0,
      (a) => a >= 1,
      30_000,
      'first attempt',
    );
    await ws.close();
    sse.close();
    await svc.close();
    receiver.down = false;
    svc = await startService(env);
    const hook = await hookFor('order-restart');
    expect(hook.headers.traceparent).toBe(tp);
    expect(hook.body.traceparent).toBe(tp);
  });
});

/**
 * The lane on another instance: two service processes on one PostgreSQL, appends with a traceparent
 * through A, A killed (SIGKILL) at once; B's sweep takes A's lanes over (its projection's Apply is made
 * slow so that most of them are still to run) and writes their notifications, so the trace can only
 * come from the store.
 */
describe('a caller trace context when the lane runs on another instance (PostgreSQL, two processes, tracing off)', () => {
  const running: ServiceProcess[] = [];
  let receiver: WebhookReceiver;
  afterAll(async () => {
    for (const p of running) if (p.child.exitCode === null && p.child.signalCode === null) await p.kill('SIGKILL');
    await receiver?.stop();
  });

  it('B’s notifications and webhooks carry the traceparent A stored with the events', async () => {
    const env = {
      DATABASE_URL: await (await postgresServer()).createDatabase('trace_takeover'),
      RUNTIME_COMPILER_HOSTS: '1',
      RUNTIME_EXEC_HOSTS: '1',
      LANE_SWEEP_MS: '500',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_POLL_MS: '100',
      METRICS_ENABLED: 'true',
      // One key for both, as an operator runs several instances: B decrypts the secret A made.
      WEBHOOK_SECRETS_KEY: randomBytes(32).toString('base64'),
    };
    const [a, b] = [0, 1].map(() => new ServiceProcess({ ...env, DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'es-trace-mi-')) }));
    running.push(a, b);
    await a.start();
    await b.start();
    receiver = await new WebhookReceiver().start();
    const ta = await newTenant(a.url, 'trace-takeover');
    const tb = clientFor(b.url, ta.key, ta.tenantId);
    // customer-totals with Apply made slow (tens of ms per event).
    const slow = exampleSources('customer-totals').map((f) => ({
      ...f,
      content: f.content.replace(
        /(public CustomerTotals Apply\(CustomerTotals state, Event e\)\s*\{)/,
        '$1 long spin = 0; for (var k = 0; k < 10000000; k++) spin += k ^ (k >> 3); if (spin == 42) state.OrderCount = -1;',
      ),
    }));
    const up = await uploadProjection(a.url, ta.key, slow, { notifications: { webhook: { url: receiver.url } } });
    receiver.secrets = [up.notifications.webhook.secret];
    const projectionId = await projectionActive(b.url, ta.key, up.uploadId);

    const n = 30;
    const acks = await Promise.all(
      Array.from({ length: n }, (_, i) => ta.post('/events', order(`order-mi-${i}`, `c${i % 10}`), { traceparent: TP, tracestate: TS })),
    );
    expect(acks.map((r) => r.status)).toEqual(Array(n).fill(201));
    await a.kill('SIGKILL');

    const log = await until(
      async () => (await tb.get(`/projections/${projectionId}/notifications?limit=1000`)).body.notifications as any[],
      (ns) => ns.length >= n,
      120_000,
      'every notification, through B',
    );
    expect(log.map((x) => [x.traceparent, x.tracestate])).toEqual(Array(n).fill([TP, TS]));
    const hooks = await until(
      () => receiver.accepted,
      (h) => new Set(h.map((x) => x.sequence)).size >= n,
      120_000,
      'every webhook',
    );
    expect(hooks.every((h) => h.headers.traceparent === TP && h.headers.tracestate === TS)).toBe(true);
    // B ran lanes of these events (A was killed as soon as they were acknowledged).
    const scrape = parseScrape(await (await fetch(`${b.url}/metrics`)).text());
    expect(scrape.sum('eventstore_apply_calls_total', { kind: 'projection' })).toBeGreaterThan(0);
    await b.kill('SIGTERM');
  });
});
