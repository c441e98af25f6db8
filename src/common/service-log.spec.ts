import Fastify from 'fastify';
import { prettyLogLine } from './pretty-log-line';
import { installRequestIdHeader, requestIdOf, ServiceLogController, serviceLoggerOptions, tickBufferedStdout } from './service-log';

/** A Fastify instance logging the service's way into `lines`. */
function app(format: 'json' | 'pretty' = 'json', level: 'info' | 'trace' | 'warn' = 'info') {
  const lines: string[] = [];
  const fastify = Fastify({
    logger: serviceLoggerOptions(level, format, (t) => void lines.push(t)),
    logController: new ServiceLogController(level === 'trace'),
    genReqId: requestIdOf,
  });
  installRequestIdHeader(fastify);
  fastify.get('/events/:aggregateId', async (req) => {
    (req as { tenant?: { tenantId: string } }).tenant = { tenantId: 'tenant-1' };
    req.log.info('x-api-key: esk_abc123 and ?apiKey=plain-secret-0123456789 and authorization: Bearer tok');
    return { ok: true };
  });
  return { fastify, lines };
}

describe('service log', () => {
  it('writes one JSON line per request with its id, tenant, method, route template, status and duration', async () => {
    const { fastify, lines } = app();
    const res = await fastify.inject({ url: '/events/order-7?apiKey=k', headers: { 'x-request-id': 'trace-42' } });
    expect(res.headers['x-request-id']).toBe('trace-42');
    const request = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request');
    expect(request).toMatchObject({
      level: 'info',
      reqId: 'trace-42',
      tenantId: 'tenant-1',
      method: 'GET',
      route: '/events/:aggregateId',
      status: 200,
      durationMs: expect.any(Number),
    });
    expect(new Date(request.time).toISOString()).toBe(request.time);
    // The route is the template: neither the aggregate id nor the query is in any line.
    expect(lines.join('')).not.toMatch(/order-7|apiKey=k/);
  });

  it('redacts keys, the admin token and ?apiKey= from whatever a line says', async () => {
    const { fastify, lines } = app();
    await fastify.inject({ url: '/events/a' });
    const out = lines.join('');
    expect(out).not.toMatch(/esk_abc123|plain-secret-0123456789|Bearer tok/);
    expect(out).toContain('[REDACTED]');
  });

  it('makes up a request id when the caller sent none or one that is not a plain token', async () => {
    const { fastify } = app();
    const none = await fastify.inject({ url: '/events/a' });
    const odd = await fastify.inject({ url: '/events/a', headers: { 'x-request-id': 'has spaces and "quotes"' } });
    expect(none.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(odd.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("writes an unknown route's line with no route and no URL, and a failed request's with its status", async () => {
    const { fastify, lines } = app();
    fastify.get('/boom', async () => {
      throw new Error('boom');
    });
    await fastify.inject({ url: '/no/such/thing?apiKey=x' });
    await fastify.inject({ url: '/boom' });
    const requests = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    expect(requests[0]).toMatchObject({ level: 'info', route: null, status: 404 });
    expect(lines.join('')).not.toContain('/no/such/thing');
    // The error itself is logged where it is handled (the service's ErrorFilter), once.
    expect(requests[1]).toMatchObject({ route: '/boom', status: 500 });
  });

  it('writes no request line at warn', async () => {
    const { fastify, lines } = app('json', 'warn');
    await fastify.inject({ url: '/events/a' });
    expect(lines).toEqual([]);
  });

  it('writes readable lines with LOG_FORMAT=pretty, redacted the same', async () => {
    const { fastify, lines } = app('pretty');
    await fastify.inject({ url: '/events/a', headers: { 'x-request-id': 'r1' } });
    const request = lines.find((l) => l.includes(' request '))!;
    expect(request).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}\(r1\) request tenantId=tenant-1 method=GET route=\/events\/:aggregateId status=200 durationMs=[\d.]+\n$/,
    );
    expect(lines.join('')).not.toMatch(/esk_abc123|plain-secret-0123456789/);
  });
});

describe('prettyLogLine', () => {
  it('puts a context in brackets, a stack below, and passes a line that is not JSON as it is', () => {
    expect(
      prettyLogLine('{"level":"error","time":"2026-01-02T03:04:05.678Z","context":"Errors","msg":"boom","stack":"Error: boom\\n    at x"}'),
    ).toBe('03:04:05.678 ERROR [Errors] boom\nError: boom\n    at x\n');
    expect(prettyLogLine('not json\n')).toBe('not json\n');
  });
});

describe('tickBufferedStdout', () => {
  it('writes the lines of one turn of the event loop in one write, in order', async () => {
    const writes: string[] = [];
    const out = tickBufferedStdout((t) => void writes.push(t));
    out('a\n');
    out('b\n');
    expect(writes).toEqual([]);
    await new Promise((r) => setImmediate(r));
    out('c\n');
    await new Promise((r) => setImmediate(r));
    expect(writes).toEqual(['a\nb\n', 'c\n']);
  });
});
