import { context, ProxyTracerProvider, SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { notificationTraceParent, startCommitSpan, startLaneRunSpan, startNotificationWriteSpan, startWebhookAttemptSpan } from './spans';
import { AppendTraces } from './append-traces';
import {
  activeTraceParent,
  formatTraceParent,
  inActiveSpan,
  parseTraceParent,
  startCarriedSpan,
  traceParentOf,
  tracingOn,
} from './tracing';
import { startTracing, Tracing, tracingSettings } from './tracing-setup';

const A = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const B = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('traceparent', () => {
  it('reads a W3C traceparent and writes it back; refuses malformed and all-zero ids', () => {
    const c = parseTraceParent(A)!;
    expect(c).toEqual({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1, isRemote: true });
    expect(formatTraceParent(c)).toBe(A);
    for (const bad of [
      '',
      'garbage',
      A.toUpperCase(),
      `00-${'0'.repeat(32)}-b7ad6b7169203331-01`,
      `00-0af7651916cd43dd8448eb211c80319c-${'0'.repeat(16)}-01`,
    ])
      expect(parseTraceParent(bad)).toBeUndefined();
  });
});

describe('tracing settings', () => {
  it('is off without an OTLP endpoint, or with OTEL_SDK_DISABLED', () => {
    expect(tracingSettings({})).toBeNull();
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' })).toBeNull();
  });

  it('takes the traces endpoint as given, the general one with /v1/traces, and the service name (eventstore by default)', () => {
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })).toEqual({
      url: 'http://c:4318/v1/traces',
      serviceName: 'eventstore',
    });
    expect(
      tracingSettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://t/x',
        OTEL_SERVICE_NAME: 'es-1',
      }),
    ).toEqual({ url: 'https://t/x', serviceName: 'es-1' });
  });

  it('refuses an endpoint that is not an http(s) URL, naming the variable', () => {
    expect(() => tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
  });
});

describe('tracing off', () => {
  it('registers nothing: no provider, no async-hooks context manager, no span from any helper', async () => {
    expect(startTracing({})).toBeNull();
    expect(tracingOn()).toBe(false);
    expect((trace.getTracerProvider() as ProxyTracerProvider).getDelegate().constructor.name).toBe('NoopTracerProvider');
    expect((context as any)._getContextManager().constructor.name).toBe('NoopContextManager');
    const traces = new AppendTraces();
    traces.remember('t', 1, 1, A);
    expect(startCommitSpan([{ trace: A }])).toBeUndefined();
    expect(startCarriedSpan('x', [A], {})).toBeUndefined();
    expect(startLaneRunSpan(traces, { tenantId: 't', versionId: 'v' }, [{ position: 1 }])).toBeUndefined();
    expect(startWebhookAttemptSpan(A, 'http://h/', { tenantId: 't', projectionId: 'p', sequence: 1, attempts: 1 })).toBeUndefined();
    expect(await inActiveSpan('x', {}, async () => activeTraceParent())).toBeUndefined();
  });
});

describe('tracing on (in-memory exporter)', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing;
  beforeAll(() => (tracing = startTracing({ OTEL_SERVICE_NAME: 'unit' }, exporter)!));
  afterAll(() => tracing.shutdown());
  const spans = async (): Promise<ReadableSpan[]> => {
    await tracing.flush();
    return exporter.getFinishedSpans();
  };
  beforeEach(() => exporter.reset());

  it('registers the provider with the async-hooks context manager and the service name', async () => {
    expect(tracingOn()).toBe(true);
    expect((context as any)._getContextManager().constructor.name).toBe('AsyncLocalStorageContextManager');
    expect((trace.getTracerProvider() as ProxyTracerProvider).getDelegate()).toBe(tracing.provider);
    startCarriedSpan('named', [A], {})!.end();
    await tracing.flush();
    expect(exporter.getFinishedSpans()[0].resource.attributes).toMatchObject({
      'service.name': 'unit',
      'telemetry.sdk.language': 'nodejs',
    });
  });

  it('carried work joins the first trace as a child and links the others', async () => {
    startCarriedSpan('run', [undefined, A, B, A], { n: 1 })!.end();
    const [s] = await spans();
    expect(s.spanContext().traceId).toBe(parseTraceParent(A)!.traceId);
    expect(s.parentSpanContext?.spanId).toBe(parseTraceParent(A)!.spanId);
    expect(s.links.map((l) => l.context.traceId)).toEqual([parseTraceParent(B)!.traceId]);
    expect(startCarriedSpan('none', [undefined, 'bad'], {})).toBeUndefined();
  });

  it('a commit is a root of its own linked to each append; spans in the active context are its children', async () => {
    const outer = await inActiveSpan('request', {}, async () => {
      const inner = activeTraceParent();
      startCommitSpan([{ trace: A }, { trace: inner }, {}])!.end();
      return inner;
    });
    const all = await spans();
    const commit = all.find((s) => s.name === 'eventstore.commit')!;
    const request = all.find((s) => s.name === 'request')!;
    expect(commit.parentSpanContext).toBeUndefined();
    expect(commit.links.map((l) => l.context.spanId)).toEqual([parseTraceParent(A)!.spanId, request.spanContext().spanId]);
    expect(outer).toBe(formatTraceParent(request.spanContext()));
  });

  it('a lane run with nothing remembered (a restart, another instance) continues the traceparent stored with its events', async () => {
    const empty = new AppendTraces();
    const lane = { tenantId: 't', versionId: 'v' };
    expect(startLaneRunSpan(empty, lane, [{ position: 1 }])).toBeUndefined();
    startLaneRunSpan(empty, lane, [{ position: 1 }, { position: 2, traceParent: B }])!.end();
    // Remembered first: the append's own span is the parent, the stored caller's one a link.
    const remembered = new AppendTraces();
    remembered.remember('t', 3, 3, A);
    startLaneRunSpan(remembered, lane, [{ position: 3, traceParent: B }])!.end();
    const [fromStore, fromMemory] = await spans();
    expect(fromStore.spanContext().traceId).toBe(parseTraceParent(B)!.traceId);
    expect(fromStore.parentSpanContext?.spanId).toBe(parseTraceParent(B)!.spanId);
    expect(fromMemory.parentSpanContext?.spanId).toBe(parseTraceParent(A)!.spanId);
    expect(fromMemory.links.map((l) => l.context.spanId)).toEqual([parseTraceParent(B)!.spanId]);
  });

  it('a notification keeps the write span when its event is in the run trace, else its own append trace', async () => {
    const run = startCarriedSpan('eventstore.lane.run', [A, B], {}, { kind: SpanKind.INTERNAL })!;
    const write = startNotificationWriteSpan(run, 'p', 2)!;
    expect(notificationTraceParent(write, A)).toBe(traceParentOf(write));
    expect(notificationTraceParent(write, B)).toBe(B);
    expect(notificationTraceParent(write, undefined)).toBeUndefined();
    write.end();
    run.end();
    const all = await spans();
    expect(all.find((s) => s.name === 'eventstore.notification.write')!.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
  });

  // Last: shutting down stops the exporter too.
  it('shuts down to off again', async () => {
    const second = new InMemorySpanExporter();
    await tracing.shutdown();
    expect(tracingOn()).toBe(false);
    expect((context as any)._getContextManager().constructor.name).toBe('NoopContextManager');
    tracing = startTracing({}, second)!;
    startCarriedSpan('again', [A], {})!.end();
    await tracing.flush();
    expect(second.getFinishedSpans().map((s) => s.name)).toEqual(['again']);
  });
});
