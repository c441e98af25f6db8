import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import { parseScrape, Scrape } from '../support/prometheus-text';
import { ADMIN_TOKEN, Client, newTenant, request, RunningService, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { SseCollector, WsCollector } from '../support/stream-clients';
import { deployReducer, exampleSources, projectionActive, until, uploadProjection } from '../support/tenant-code';

/**
 * GET /metrics (issue 14) on the whole service over HTTP, on both stores: appends, a reducer, a
 * projection deployed with a lane held by a throwing Apply, a webhook whose receiver answers 500,
 * streams and rate-limit refusals, then a scrape parsed with a Prometheus text-format parser whose
 * counts must match what was done.
 */
jest.setTimeout(240_000);
afterAll(() => stopBackends(), 60_000);

const FAST = {
  LANE_RETRY_BACKOFF_MS: '20,20',
  LANE_SWEEP_MS: '200',
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_POLL_MS: '100',
  // One retry, then dead-lettered.
  WEBHOOK_RETRY_BACKOFF_MS: '20',
  QUOTA_REFUSAL_DELAY_MS: '0',
};

const POISON = `using EventSourcing;
namespace Poison {
  public sealed class Count { public int N { get; set; } }
  public sealed record Tick(string Key, bool Poison);
  [ProjectionName("poison-counts")]
  public sealed class PoisonProjection : IProjection<Count> {
    public string? ResolveKey(Event e) => e.EventType == "Tick" ? e.DataAs<Tick>().Key : null;
    public Count Apply(Count s, Event e) {
      if (e.DataAs<Tick>().Poison) throw new System.InvalidOperationException("poison event");
      s.N++; return s;
    }
  }
}`;

/** A webhook receiver that fails every delivery with 500. */
async function failingReceiver(): Promise<{ url: string; requests: () => number; stop: () => Promise<void> }> {
  let requests = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests++;
      res.writeHead(500).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    requests: () => requests,
    stop: () => new Promise((r) => server.close(() => r())),
  };
}

async function scrape(url: string, headers: Record<string, string> = {}): Promise<Scrape> {
  const res = await fetch(`${url}/metrics`, { headers, signal: AbortSignal.timeout(30_000) });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseScrape(await res.text());
}

const post = (c: Client, body: unknown) => c.post('/events', body);

describe.each(STORE_BACKENDS)('GET /metrics on %s', (backend) => {
  let svc: RunningService;
  let receiver: Awaited<ReturnType<typeof failingReceiver>>;

  beforeAll(async () => {
    receiver = await failingReceiver();
    svc = await startService({ ...(await envFor(backend)), ...FAST });
  }, 120_000);
  afterAll(async () => {
    await svc?.close();
    await receiver?.stop();
  });

  it('counts appends, Apply calls, a held lane, a failed webhook, streams and refusals, each as done', async () => {
    // A projection whose Apply throws on a poison event, with a webhook that always fails and SSE on.
    const a = await newTenant(svc.url, 'metrics-projection');
    const up = await uploadProjection(svc.url, a.key, [{ path: 'Poison.cs', content: POISON }], {
      notifications: { webhook: { url: receiver.url }, sse: true },
    });
    const pid = await projectionActive(svc.url, a.key, up.uploadId);
    for (const [i, key, poison] of [
      [1, 'bad', true],
      [2, 'good', false],
      [3, 'bad', false],
      [4, 'good', false],
    ] as const) {
      expect((await post(a, { aggregateId: `tick-${i}`, eventType: 'Tick', data: { key, poison } })).status).toBe(201);
    }
    // A reducer: every append of its aggregate type is folded through its Apply.
    const r = await newTenant(svc.url, 'metrics-reducer');
    await deployReducer(svc.url, r.key, 'bank-v1', exampleSources('bank-account'));
    expect((await post(r, { aggregateId: 'account-1', eventType: 'AccountOpened', data: { owner: 'ada' } })).status).toBe(201);
    expect((await post(r, { aggregateId: 'account-1', eventType: 'MoneyDeposited', data: { amount: 10 } })).status).toBe(201);
    const batch = await r.post('/events/batch', {
      aggregateId: 'account-1',
      events: [
        { eventType: 'MoneyDeposited', data: { amount: 5 } },
        { eventType: 'MoneyWithdrawn', data: { amount: 1 } },
      ],
    });
    expect(batch.status).toBe(201);
    // A tenant with one append request an hour: its next two are refused.
    const limited = await newTenant(svc.url, 'metrics-limited');
    const put = await request(
      `${svc.url}/admin/tenants/${limited.tenantId}/limits`,
      'PUT',
      { appendRequests: { quota: 1, windowSeconds: 3600 } },
      { authorization: `Bearer ${ADMIN_TOKEN}` },
    );
    expect(put.status).toBe(200);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await post(limited, { aggregateId: `order-${i}`, eventType: 'Placed', data: {} })).status);
    expect(statuses).toEqual([201, 429, 429]);

    // The poison lane is held after three attempts; both notifications of 'good' are dead-lettered after two each.
    const held = await until(
      () => a.get(`/projections/${pid}/lanes?held=true`),
      (res) => res.body.lanes?.length === 1,
    );
    expect(held.body.lanes[0].key).toBe('bad');
    let s = await until(
      () => scrape(svc.url),
      (x) => x.sum('eventstore_webhook_dead_letters_total') >= 2,
      60_000,
      'both notifications dead-lettered',
    );
    expect(receiver.requests()).toBe(4);

    // Appends by store: 4 + 3 + 1 requests stored, 4 + 4 + 1 events; the refused ones stored nothing.
    expect(s.sum('eventstore_append_requests_total', { store: backend })).toBe(8);
    expect(s.sum('eventstore_events_appended_total', { store: backend })).toBe(9);
    expect(s.sum('eventstore_group_commit_batch_size_sum', { store: backend })).toBe(8);
    expect(s.sum('eventstore_group_commit_batch_size_count', { store: backend })).toBeGreaterThanOrEqual(1);

    // HTTP by route template, method and status: never the URL.
    expect(s.sum('eventstore_http_requests_total', { route: '/events', method: 'POST', status: '201' })).toBe(7);
    expect(s.sum('eventstore_http_requests_total', { route: '/events/batch', method: 'POST', status: '201' })).toBe(1);
    expect(s.sum('eventstore_http_requests_total', { route: '/events', method: 'POST', status: '429' })).toBe(2);
    expect(s.sum('eventstore_http_request_duration_seconds_count', { route: '/events', method: 'POST' })).toBe(9);
    expect(s.sum('eventstore_http_requests_total', { route: '/projections/:id/lanes', method: 'GET' })).toBeGreaterThanOrEqual(1);

    // Apply: the poison lane failed exactly three times (then held); the good lane and the reducer succeeded.
    expect(s.sum('eventstore_apply_failures_total', { kind: 'projection' })).toBe(3);
    expect(s.sum('eventstore_apply_calls_total', { kind: 'projection', outcome: 'failed' })).toBe(3);
    expect(s.sum('eventstore_apply_calls_total', { kind: 'projection', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(s.sum('eventstore_apply_calls_total', { kind: 'reducer', outcome: 'ok' })).toBeGreaterThanOrEqual(3);
    expect(s.sum('eventstore_apply_failures_total', { kind: 'reducer' })).toBe(0);
    expect(s.sum('eventstore_apply_duration_seconds_count')).toBe(s.sum('eventstore_apply_calls_total'));

    // The held lane's projection, from the store at scrape time.
    const version = { tenant: a.tenantId, projection: pid, version: 'active' };
    expect(s.sum('eventstore_projection_held_lanes', version)).toBe(1);
    expect(s.sum('eventstore_projection_lanes', version)).toBe(2);
    expect(s.sum('eventstore_projection_lag_events', version)).toBe(4); // 'bad' holds at the first event
    expect(s.sum('eventstore_projection_inbox_depth', version)).toBe(2); // tick-1 and tick-3 wait in 'bad'
    expect(s.sum('eventstore_projection_oldest_unapplied_age_seconds', version)).toBeGreaterThan(0);
    expect(s.sum('eventstore_notification_log_head', { tenant: a.tenantId, projection: pid })).toBe(2);

    // The webhook: each notification failed once, then was dead-lettered.
    expect(s.sum('eventstore_webhook_deliveries_total', { outcome: 'failed' })).toBe(2);
    expect(s.sum('eventstore_webhook_deliveries_total', { outcome: 'dead' })).toBe(2);
    expect(s.sum('eventstore_webhook_deliveries_total', { outcome: 'delivered' })).toBe(0);
    expect(s.sum('eventstore_webhook_dead_letters_total')).toBe(2);
    expect(s.sum('eventstore_webhook_delivery_duration_seconds_count')).toBe(4);

    // Rate-limit refusals by tenant and policy.
    expect(s.sum('eventstore_rate_limit_refusals_total', { tenant: limited.tenantId, policy: 'appends' })).toBe(2);
    expect(s.sum('eventstore_rate_limit_refusals_total', { tenant: a.tenantId })).toBe(0);

    // The runtime: both uploads compiled, none waiting; executors running with the tenants' assemblies.
    expect(s.sum('eventstore_compile_duration_seconds_count', { outcome: 'compiled' })).toBe(2);
    expect(s.sum('eventstore_compile_queue_depth')).toBe(0);
    expect(s.sum('eventstore_runtime_host_starts_total', { mode: 'compile' })).toBeGreaterThanOrEqual(1);
    expect(s.sum('eventstore_runtime_host_starts_total', { mode: 'exec' })).toBeGreaterThanOrEqual(1);
    expect(s.sum('eventstore_runtime_host_restarts_total')).toBe(0);
    expect(s.sum('eventstore_executor_processes')).toBeGreaterThanOrEqual(1);
    expect(s.sum('eventstore_executor_loaded_assemblies')).toBeGreaterThanOrEqual(2);

    // No state key, aggregate id or event id in any label.
    const values = [...s.families.keys()].flatMap((name) =>
      ['', '_count', '_sum', '_bucket'].flatMap((suffix) => s.series(name + suffix).flatMap((x) => Object.values(x.labels))),
    );
    expect(values.length).toBeGreaterThan(0);
    for (const forbidden of ['bad', 'good', 'tick-1', 'account-1', 'order-0']) expect(values).not.toContain(forbidden);
    expect(values.filter((v) => /tick-|account-|order-/.test(v))).toEqual([]);

    // Open streams by transport, counted while they are open.
    const ws = await WsCollector.open(svc.url, pid, a.key, 0);
    const sse = await SseCollector.open(svc.url, pid, a.key, {}, '?afterSequence=0');
    s = await scrape(svc.url);
    expect(s.sum('eventstore_stream_connections', { transport: 'websocket' })).toBe(1);
    expect(s.sum('eventstore_stream_connections', { transport: 'sse' })).toBe(1);
    await ws.close();
    sse.close();
    await until(
      () => scrape(svc.url),
      (x) => x.sum('eventstore_stream_connections') === 0,
      10_000,
      'streams closed',
    );
  });

  it('documents every family with a help text, typed, all prefixed eventstore_', async () => {
    const s = await scrape(svc.url);
    const expected: Record<string, string> = {
      eventstore_http_requests_total: 'COUNTER',
      eventstore_http_request_duration_seconds: 'HISTOGRAM',
      eventstore_append_requests_total: 'COUNTER',
      eventstore_events_appended_total: 'COUNTER',
      eventstore_group_commit_batch_size: 'HISTOGRAM',
      eventstore_apply_calls_total: 'COUNTER',
      eventstore_apply_failures_total: 'COUNTER',
      eventstore_apply_duration_seconds: 'HISTOGRAM',
      eventstore_projection_lag_events: 'GAUGE',
      eventstore_projection_oldest_unapplied_age_seconds: 'GAUGE',
      eventstore_projection_inbox_depth: 'GAUGE',
      eventstore_projection_held_lanes: 'GAUGE',
      eventstore_projection_lanes: 'GAUGE',
      eventstore_notification_log_head: 'GAUGE',
      eventstore_webhook_deliveries_total: 'COUNTER',
      eventstore_webhook_delivery_duration_seconds: 'HISTOGRAM',
      eventstore_webhook_dead_letters_total: 'COUNTER',
      eventstore_webhook_heads_repaired_total: 'COUNTER',
      eventstore_stream_connections: 'GAUGE',
      eventstore_executor_processes: 'GAUGE',
      eventstore_executor_loaded_assemblies: 'GAUGE',
      eventstore_runtime_host_starts_total: 'COUNTER',
      eventstore_runtime_host_restarts_total: 'COUNTER',
      eventstore_compile_queue_depth: 'GAUGE',
      eventstore_compile_duration_seconds: 'HISTOGRAM',
      eventstore_rate_limit_refusals_total: 'COUNTER',
    };
    expect(Object.fromEntries([...s.families].map(([name, f]) => [name, f.type]))).toEqual(expected);
    for (const f of s.families.values()) expect(f.help.length).toBeGreaterThan(10);
  });
});

describe('GET /metrics access', () => {
  it('is public without METRICS_TOKEN, but with one answers 401 in the error format unless the bearer matches', async () => {
    const token = 'metrics-scraper-token-0123';
    const svc = await startService({ METRICS_TOKEN: token });
    try {
      const t = await newTenant(svc.url, 'scraper');
      const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer wrong-token-0123456789' }, { 'x-api-key': t.key }];
      for (const headers of attempts) {
        const res = await request(`${svc.url}/metrics`, 'GET', undefined, headers);
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ error: 'UNAUTHORIZED', message: expect.stringContaining('metrics token') });
      }
      const s = await scrape(svc.url, { authorization: `Bearer ${token}` });
      // The refusals were counted too, by their route.
      expect(s.sum('eventstore_http_requests_total', { route: '/metrics', method: 'GET', status: '401' })).toBe(3);
    } finally {
      await svc.close();
    }
    const open = await startService();
    try {
      expect((await scrape(open.url)).families.size).toBeGreaterThan(20);
    } finally {
      await open.close();
    }
  });

  it('is gone with METRICS_ENABLED=false, and the rest of the service answers as before', async () => {
    const svc = await startService({ METRICS_ENABLED: 'false' });
    try {
      const res = await request(`${svc.url}/metrics`, 'GET');
      expect(res.status).toBe(404);
      const t = await newTenant(svc.url, 'no-metrics');
      expect((await t.post('/events', { aggregateId: 'order-1', eventType: 'Placed', data: {} })).status).toBe(201);
    } finally {
      await svc.close();
    }
  });
});
