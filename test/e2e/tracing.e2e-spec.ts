import * as fs from 'node:fs';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { context, ProxyTracer, ProxyTracerProvider, SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { startTracing, Tracing } from '../../src/observability/tracing/tracing-setup';
import { tracingOn } from '../../src/observability/tracing/tracing';
import { Client, newTenant, RunningService, ServiceProcess, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { SseCollector, WsCollector } from '../support/stream-clients';
import { deployReducer, exampleSources, projectionActive, until, uploadProjection } from '../support/tenant-code';
import { WebhookReceiver } from '../support/webhook-receiver';

jest.setTimeout(240_000);
afterAll(() => stopBackends(), 60_000);

const FAST = {
  LANE_SWEEP_MS: '200',
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_RETRY_BACKOFF_MS: '50,50,50,50,50',
  WEBHOOK_POLL_MS: '100',
};

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN}-01`;

const order = (id: string, customerId: string) => ({
  aggregateId: id,
  eventType: 'OrderPlaced',
  data: { customerId, lines: [{ sku: 'x', qty: 1, price: 3 }] },
});

// First, before this file registers any provider: the service as `npm start` runs it without an OTLP endpoint.
describe('tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  let svc: RunningService;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    // What main.ts does with the environment: no endpoint, no provider.
    expect(startTracing({ OTEL_SERVICE_NAME: 'eventstore' })).toBeNull();
    svc = await startService(FAST);
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await svc?.close();
    await receiver?.stop();
  });

  it('registers nothing, makes no span on any hop, and passes the caller traceparent on as sent', async () => {
    expect(tracingOn()).toBe(false);
    expect((trace.getTracerProvider() as ProxyTracerProvider).getDelegate().constructor.name).toBe('NoopTracerProvider');
    expect((context as any)._getContextManager().constructor.name).toBe('NoopContextManager');

    const c = await newTenant(svc.url, 'untraced');
    await deployReducer(svc.url, c.key, 'orders', exampleSources('orders'));
    const up = await uploadProjection(svc.url, c.key, exampleSources('customer-totals'), {
      notifications: { webhook: { url: receiver.url }, sse: true },
    });
    receiver.secrets = [up.notifications.webhook.secret];
    const projectionId = await projectionActive(svc.url, c.key, up.uploadId);
    const ws = await WsCollector.open(svc.url, projectionId, c.key);
    const sse = await SseCollector.open(svc.url, projectionId, c.key);

    // Any span made through the OpenTelemetry API (ours or a library's) goes through ProxyTracer.
    const startSpan = jest.spyOn(ProxyTracer.prototype, 'startSpan');
    const startActiveSpan = jest.spyOn(ProxyTracer.prototype, 'startActiveSpan');
    try {
      const r = await c.post('/events', order('order-1', 'cust-1'), { traceparent: TRACEPARENT });
      expect(r.status).toBe(201);
      expect(r.body.state).toBeDefined(); // the reducer ran
      const [hook] = await until(
        () => receiver.accepted,
        (a) => a.length >= 1,
        60_000,
        'webhook',
      );
      await until(
        () => ws.messages.length + sse.sequences().length,
        (n) => n >= 2,
        30_000,
        'stream messages',
      );

      // The caller's trace context is kept with the event (issue 24): the webhook passes it on as sent, no span of ours in between.
      expect(hook.headers.traceparent).toBe(TRACEPARENT);
      expect(hook.body).toMatchObject({ traceparent: TRACEPARENT, traceId: TRACE_ID });
      const fields = [
        'type',
        'sequence',
        'projectionId',
        'aggregateId',
        'aggregateType',
        'stateKey',
        'version',
        'state',
        'timestamp',
        'traceparent',
        'traceId',
      ];
      expect(Object.keys(hook.body).sort()).toEqual([...fields].sort());
      expect(Object.keys(ws.messages[0]).sort()).toEqual([...fields].sort());
      expect(Object.keys(sse.events.find((e) => e.event === 'state_changed')!.data).sort()).toEqual([...fields].sort());
      expect(startSpan).not.toHaveBeenCalled();
      expect(startActiveSpan).not.toHaveBeenCalled();
    } finally {
      startSpan.mockRestore();
      startActiveSpan.mockRestore();
      await ws.close();
      sse.close();
    }
  });
});

describe.each(STORE_BACKENDS)('one append, one trace, on %s', (backend) => {
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing;
  let svc: RunningService;
  let c: Client;
  let receiver: WebhookReceiver;
  let projectionId: string;

  beforeAll(async () => {
    // The test's way in: the SDK's in-memory exporter in place of OTLP (tracing-setup.ts).
    tracing = startTracing({ OTEL_SERVICE_NAME: 'eventstore-test' }, exporter)!;
    svc = await startService({ ...(await envFor(backend)), ...FAST });
    c = await newTenant(svc.url, `traced-${backend}`);
    receiver = await new WebhookReceiver().start();
    await deployReducer(svc.url, c.key, 'orders', exampleSources('orders'));
    const up = await uploadProjection(svc.url, c.key, exampleSources('customer-totals'), {
      notifications: { webhook: { url: receiver.url }, sse: true },
    });
    receiver.secrets = [up.notifications.webhook.secret];
    projectionId = await projectionActive(svc.url, c.key, up.uploadId);
  });
  afterAll(async () => {
    await svc?.close();
    await receiver?.stop();
    await tracing?.shutdown();
  });

  async function spansUntil(ok: (spans: ReadableSpan[]) => boolean): Promise<ReadableSpan[]> {
    return until(
      async () => {
        await tracing.flush();
        return exporter.getFinishedSpans();
      },
      ok,
      60_000,
      'spans',
    );
  }

  it('continues the caller traceparent from the request to the webhook, and the streams carry its trace id', async () => {
    const ws = await WsCollector.open(svc.url, projectionId, c.key);
    const sse = await SseCollector.open(svc.url, projectionId, c.key);
    exporter.reset();

    const r = await c.post('/events', order('order-traced', 'cust-traced'), { traceparent: TRACEPARENT });
    expect(r.status).toBe(201);
    expect(r.body.state).toBeDefined(); // the reducer ran

    // (b) the webhook request the append caused carries a traceparent of the same trace
    const [hook] = await until(
      () => receiver.accepted,
      (a) => a.length >= 1,
      60_000,
      'webhook',
    );
    expect(hook.body.aggregateId).toBe('order-traced');
    const hookParent = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(hook.headers.traceparent ?? '');
    expect(hookParent?.[1]).toBe(TRACE_ID);

    // (c) stream messages carry the trace id (WebSocket frame, SSE data)
    await until(
      () => ws.messages.length + sse.sequences().length,
      (n) => n >= 2,
      30_000,
      'stream messages',
    );
    expect(ws.messages[0]).toMatchObject({ type: 'state_changed', aggregateId: 'order-traced', traceId: TRACE_ID });
    expect(sse.events.find((e) => e.event === 'state_changed')?.data).toMatchObject({ aggregateId: 'order-traced', traceId: TRACE_ID });
    await ws.close();
    sse.close();

    // (a) one trace: every hop's span, the commit linked to the request
    const names = ['POST /events', 'eventstore.reducer', 'eventstore.commit', 'eventstore.route', 'eventstore.lane.run'];
    const spans = await spansUntil((s) =>
      [...names, 'eventstore.notification.write', 'eventstore.webhook.attempt'].every((n) => s.some((x) => x.name === n)),
    );
    const one = (name: string) => {
      const found = spans.filter((s) => s.name === name);
      expect({ name, count: found.length }).toEqual({ name, count: 1 });
      return found[0];
    };
    const request = one('POST /events');
    const reducer = one('eventstore.reducer');
    const commit = one('eventstore.commit');
    const route = one('eventstore.route');
    const run = one('eventstore.lane.run');
    const write = one('eventstore.notification.write');
    const attempt = one('eventstore.webhook.attempt');

    expect(request.kind).toBe(SpanKind.SERVER);
    expect(request.spanContext().traceId).toBe(TRACE_ID);
    expect(request.parentSpanContext?.spanId).toBe(CALLER_SPAN);
    expect(request.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/events', 'http.response.status_code': 201 });
    expect(request.resource.attributes['service.name']).toBe('eventstore-test');

    const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
    expect(parentOf(reducer)).toBe(request.spanContext().spanId);
    // A batch serves many requests: its own root, linked to each append's span.
    expect(parentOf(commit)).toBeUndefined();
    expect(commit.links.map((l) => l.context.spanId)).toContain(request.spanContext().spanId);
    expect(parentOf(route)).toBe(request.spanContext().spanId);
    expect(parentOf(run)).toBe(request.spanContext().spanId);
    expect(parentOf(write)).toBe(run.spanContext().spanId);
    expect(parentOf(attempt)).toBe(write.spanContext().spanId);
    expect(attempt.kind).toBe(SpanKind.CLIENT);
    expect(attempt.attributes).toMatchObject({ 'http.response.status_code': 204, 'eventstore.webhook.attempt': 1 }); // the receiver answers 204
    for (const s of [reducer, route, run, write, attempt])
      expect({ name: s.name, traceId: s.spanContext().traceId }).toEqual({ name: s.name, traceId: TRACE_ID });
    // The receiver got exactly the attempt's span as its parent.
    expect(hookParent?.[2]).toBe(attempt.spanContext().spanId);
  });

  it('starts a trace of its own for an append sent without traceparent, and its webhook carries it', async () => {
    exporter.reset();
    const before = receiver.accepted.length;
    expect((await c.post('/events', order('order-untraced-caller', 'cust-2'))).status).toBe(201);
    const hook = (
      await until(
        () => receiver.accepted,
        (a) => a.length > before,
        60_000,
        'webhook',
      )
    ).at(-1)!;
    const spans = await spansUntil((s) => s.some((x) => x.name === 'POST /events'));
    const request = spans.find((s) => s.name === 'POST /events')!;
    expect(request.parentSpanContext).toBeUndefined();
    expect(hook.headers.traceparent?.slice(3, 35)).toBe(request.spanContext().traceId);
    expect(request.spanContext().traceId).not.toBe(TRACE_ID);
  });

  it('appends of several traces to one lane: each webhook and message is in its own append trace', async () => {
    const traces = ['aa', 'bb', 'cc', 'dd'].map((x) => x.repeat(16));
    const before = receiver.accepted.length;
    // Concurrent, one key: they may share a group commit and a lane run, and still keep their own traces.
    const answers = await Promise.all(
      traces.map((t, i) => c.post('/events', order(`order-many-${i}`, 'cust-many'), { traceparent: `00-${t}-${CALLER_SPAN}-01` })),
    );
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201]);
    const hooks = (
      await until(
        () => receiver.accepted,
        (a) => a.length >= before + 4,
        60_000,
        'webhooks',
      )
    ).slice(before);
    const byAggregate = new Map(hooks.map((h) => [h.body.aggregateId as string, h]));
    traces.forEach((t, i) => {
      const h = byAggregate.get(`order-many-${i}`)!;
      expect({ i, traceparent: h.headers.traceparent?.slice(3, 35), body: h.body.traceId }).toEqual({ i, traceparent: t, body: t });
    });
  });
});

/** A stand-in OTLP/HTTP collector: keeps each export's path, content type and JSON body. */
async function startCollector() {
  const received: { path: string; contentType: string; body: any }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      received.push({
        path: req.url ?? '',
        contentType: req.headers['content-type'] ?? '',
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, received, stop: () => new Promise((r) => server.close(r)) };
}

/** Every span of every export: its name, trace id and the service.name of its resource. */
function exportedSpans(received: { body: any }[]): { name: string; traceId: string; service: string }[] {
  return received.flatMap((r) =>
    (r.body.resourceSpans ?? []).flatMap((rs: any) => {
      const service = rs.resource?.attributes?.find((a: any) => a.key === 'service.name')?.value?.stringValue;
      return (rs.scopeSpans ?? []).flatMap((ss: any) =>
        (ss.spans ?? []).map((sp: any) => ({ name: sp.name, traceId: sp.traceId, service })),
      );
    }),
  );
}

describe('the built service with OTEL_EXPORTER_OTLP_ENDPOINT (as npm start runs it)', () => {
  let dataDir: string;
  beforeAll(() => (dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-otlp-'))));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  it('exports its spans over OTLP/HTTP to <endpoint>/v1/traces under OTEL_SERVICE_NAME, the buffered ones at SIGTERM', async () => {
    const collector = await startCollector();
    // A long batch delay: whatever is exported came out at shutdown.
    const svc = new ServiceProcess({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_SERVICE_NAME: 'es-otlp',
      OTEL_BSP_SCHEDULE_DELAY: '600000',
    });
    try {
      await svc.start();
      const c = await newTenant(svc.url, 'otlp');
      expect((await c.post('/events', order('order-otlp', 'cust-1'), { traceparent: TRACEPARENT })).status).toBe(201);
      expect(await svc.kill('SIGTERM')).toBe(0);
      const spans = exportedSpans(collector.received);
      expect(collector.received.every((r) => r.path === '/v1/traces' && r.contentType.startsWith('application/json'))).toBe(true);
      expect(spans).toContainEqual({ name: 'POST /events', traceId: TRACE_ID, service: 'es-otlp' });
    } finally {
      if (svc.child && svc.child.exitCode === null) await svc.kill('SIGKILL');
      await collector.stop();
    }
  });

  it('refuses to start with an endpoint that is not an http(s) URL, naming the variable', async () => {
    const svc = new ServiceProcess({ DATA_DIR: dataDir, OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317' });
    await expect(svc.start()).rejects.toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT: must be an http\(s\) URL/);
    expect(svc.child.exitCode).toBe(2);
  });
});
