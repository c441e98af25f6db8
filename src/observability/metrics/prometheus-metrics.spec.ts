import { parseScrape } from '../../../test/support/prometheus-text';
import { NO_METRICS } from './app-metrics';
import { PrometheusMetrics, UNMATCHED_ROUTE } from './prometheus-metrics';

describe('PrometheusMetrics', () => {
  it('counts each hop into its family, the append families labelled by store', async () => {
    const m = new PrometheusMetrics('postgres');
    m.groupCommitted(3, 3, 7);
    m.groupCommitted(2, 1, 1); // one of the two refused (a version conflict): stored nothing
    m.applied('reducer', 'ok', 0.002);
    m.applied('projection', 'failed', 0.01);
    m.webhookAttempted('failed', 0.05);
    m.webhookAttempted('dead', 0.05);
    m.webhookDeadLettered();
    m.hostStarted('exec', false);
    m.hostStarted('exec', true);
    m.compiled('compiled', 1.5);
    m.rateLimited('tenant-a', 'appends');
    m.webhookHeadRepaired();
    const s = parseScrape(await m.registry.metrics());
    expect(s.sum('eventstore_append_requests_total', { store: 'postgres' })).toBe(4);
    expect(s.sum('eventstore_events_appended_total', { store: 'postgres' })).toBe(8);
    expect(s.sum('eventstore_group_commit_batch_size_count', { store: 'postgres' })).toBe(2);
    expect(s.sum('eventstore_group_commit_batch_size_bucket', { store: 'postgres', le: '2' })).toBe(1);
    expect(s.sum('eventstore_group_commit_batch_size_sum', { store: 'postgres' })).toBe(5);
    expect(s.sum('eventstore_apply_calls_total', { kind: 'reducer', outcome: 'ok' })).toBe(1);
    expect(s.sum('eventstore_apply_failures_total', { kind: 'projection' })).toBe(1);
    expect(s.sum('eventstore_apply_failures_total', { kind: 'reducer' })).toBe(0);
    expect(s.sum('eventstore_apply_duration_seconds_count')).toBe(2);
    expect(s.sum('eventstore_webhook_deliveries_total', { outcome: 'dead' })).toBe(1);
    expect(s.sum('eventstore_webhook_delivery_duration_seconds_count')).toBe(2);
    expect(s.sum('eventstore_webhook_dead_letters_total')).toBe(2); // the dead attempt and the one dead-lettered without one
    expect(s.sum('eventstore_runtime_host_starts_total', { mode: 'exec' })).toBe(2);
    expect(s.sum('eventstore_runtime_host_restarts_total', { mode: 'exec' })).toBe(1);
    expect(s.sum('eventstore_compile_duration_seconds_sum', { outcome: 'compiled' })).toBe(1.5);
    expect(s.sum('eventstore_rate_limit_refusals_total', { tenant: 'tenant-a', policy: 'appends' })).toBe(1);
    expect(s.sum('eventstore_webhook_heads_repaired_total')).toBe(1);
    expect(s.families.get('eventstore_group_commit_batch_size')?.type).toBe('HISTOGRAM');
    expect([...s.families.keys()].every((n) => n.startsWith('eventstore_'))).toBe(true);
  });

  it('labels HTTP responses by route template, a bounded method and the status', async () => {
    const m = new PrometheusMetrics('sqlite');
    m.httpResponded('/projections/:id/status', 'GET', 200, 0.003);
    m.httpResponded('/projections/:id/status', 'GET', 200, 0.004);
    m.httpResponded('/projections/:id/status', 'GET', 404, 0.001);
    m.httpResponded(UNMATCHED_ROUTE, 'BREW', 404, 0.001);
    const s = parseScrape(await m.registry.metrics());
    expect(s.series('eventstore_http_requests_total').map((x) => [x.labels, x.value])).toEqual([
      [{ route: '/projections/:id/status', method: 'GET', status: '200' }, 2],
      [{ route: '/projections/:id/status', method: 'GET', status: '404' }, 1],
      [{ route: '(unmatched)', method: 'OTHER', status: '404' }, 1],
    ]);
    expect(s.sum('eventstore_http_request_duration_seconds_sum', { status: '200' })).toBeCloseTo(0.007, 6);
  });

  it('keeps each instance apart: two services in one process do not share counts', async () => {
    const a = new PrometheusMetrics('sqlite');
    const b = new PrometheusMetrics('sqlite');
    a.groupCommitted(1, 1, 1);
    expect(parseScrape(await b.registry.metrics()).sum('eventstore_append_requests_total')).toBe(0);
  });

  it('is off in the port itself: the default counts nothing', () => {
    expect(NO_METRICS.enabled).toBe(false);
    expect(() => NO_METRICS.groupCommitted(1, 1, 1)).not.toThrow();
  });
});
