import type { FastifyInstance } from 'fastify';
import { AppMetrics } from './app-metrics';
import { UNMATCHED_ROUTE } from './prometheus-metrics';

/**
 * Counts every HTTP response by its route's template (`/projections/:id/status`, as registered),
 * never its URL, so the label set is the route table's. A request that matched no route counts as
 * `(unmatched)`. Not installed when metrics are off.
 */
export function installHttpMetrics(fastify: FastifyInstance, metrics: AppMetrics): void {
  if (!metrics.enabled) return;
  fastify.addHook('onResponse', (req, reply, done) => {
    metrics.httpResponded(req.routeOptions.url ?? UNMATCHED_ROUTE, req.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}
