import Fastify from 'fastify';
import { parseScrape } from '../../../test/support/prometheus-text';
import { AppMetrics } from './app-metrics';
import { installHttpMetrics } from './http-metrics';
import { PrometheusMetrics } from './prometheus-metrics';

describe('installHttpMetrics', () => {
  it('labels responses with the route template, never the URL, and unmatched requests as (unmatched)', async () => {
    const metrics = new PrometheusMetrics('sqlite');
    const fastify = Fastify();
    installHttpMetrics(fastify, metrics);
    fastify.get('/projections/:id/state/:key', async () => ({ ok: true }));
    fastify.get('/stream/:id', (_req, reply) => {
      // A taken-over reply (as SSE streams are) is counted when it ends.
      reply.hijack();
      reply.raw.writeHead(200, { 'content-type': 'text/event-stream' });
      reply.raw.end('data: x\n\n');
    });
    await fastify.inject('/projections/p-1/state/customer-42');
    await fastify.inject('/projections/p-2/state/customer-43');
    await fastify.inject('/stream/p-1');
    await fastify.inject({ method: 'DELETE', url: '/nothing/here' });
    await fastify.close();

    const s = parseScrape(await metrics.registry.metrics());
    expect(s.series('eventstore_http_requests_total').map((x) => [x.labels, x.value])).toEqual([
      [{ route: '/projections/:id/state/:key', method: 'GET', status: '200' }, 2],
      [{ route: '/stream/:id', method: 'GET', status: '200' }, 1],
      [{ route: '(unmatched)', method: 'DELETE', status: '404' }, 1],
    ]);
    expect(s.sum('eventstore_http_request_duration_seconds_count')).toBe(4);
  });

  it('installs nothing when metrics are off', async () => {
    const calls: string[] = [];
    const off = new (class extends AppMetrics {
      override httpResponded(route: string): void {
        calls.push(route);
      }
    })();
    const fastify = Fastify();
    installHttpMetrics(fastify, off);
    fastify.get('/x', async () => ({}));
    expect((await fastify.inject('/x')).statusCode).toBe(200);
    await fastify.close();
    expect(calls).toEqual([]);
  });
});
