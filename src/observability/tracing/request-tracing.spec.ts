import Fastify from 'fastify';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-node';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { installRequestTracing } from './request-tracing';
import { activeTraceParent } from './tracing';
import { startTracing, Tracing } from './tracing-setup';
import { elapse } from '../../../test/support/wait';

const CALLER = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('request spans (Fastify hooks)', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing;
  beforeAll(() => (tracing = startTracing({}, exporter)!));
  afterAll(() => tracing.shutdown());
  beforeEach(() => exporter.reset());

  async function app() {
    const f = Fastify();
    installRequestTracing(f);
    // Like the quota gate: an async preHandler after ours, and a body read on the socket's events.
    f.addHook('preHandler', async () => {
      await new Promise((r) => setImmediate(r));
    });
    f.get('/boom', async () => {
      throw new Error('boom');
    });
    f.post('/things/:id', async () => {
      await elapse(1, 'a timer between the request and the reply: the trace context must survive it');
      return { seen: activeTraceParent() };
    });
    await f.ready();
    return f;
  }

  it('names the span by method and route template, continues the caller trace, and is active in the handler', async () => {
    const f = await app();
    const res = await f.inject({ method: 'POST', url: '/things/42?apiKey=secret', payload: { a: 1 }, headers: { traceparent: CALLER } });
    expect(res.statusCode).toBe(200);
    await tracing.flush();
    const [span] = exporter.getFinishedSpans();
    expect(span.name).toBe('POST /things/:id');
    expect(span.kind).toBe(SpanKind.SERVER);
    expect(span.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(span.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    expect(span.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/things/:id',
      'url.path': '/things/42',
      'http.response.status_code': 200,
    });
    expect(JSON.stringify(span.attributes)).not.toContain('secret');
    expect(res.json().seen).toBe(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
    await f.close();
  });

  it('starts a new trace without traceparent; an unknown route is named by its method and a 5xx is an error', async () => {
    const f = await app();
    f.log.level = 'silent';
    await f.inject({ method: 'GET', url: '/nowhere' });
    await tracing.flush();
    const [span] = exporter.getFinishedSpans();
    expect(span.name).toBe('GET');
    expect(span.parentSpanContext).toBeUndefined();
    expect(span.attributes['http.response.status_code']).toBe(404);
    expect(span.status.code).toBe(SpanStatusCode.UNSET); // a 4xx is the client's
    exporter.reset();
    await f.inject({ method: 'GET', url: '/boom' });
    await tracing.flush();
    const [failed] = exporter.getFinishedSpans();
    expect(failed.attributes['http.response.status_code']).toBe(500);
    expect(failed.status.code).toBe(SpanStatusCode.ERROR);
    await f.close();
  });
});
