import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import WebSocket from 'ws';
import { ADMIN_TOKEN, Client, clientFor, newTenant, request, RunningService, startService } from '../support/service-harness';
import { RawHttp } from '../support/raw-http';
import { exampleSources } from '../support/runtime-harness';
import { envFor, schedulerEnv, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { SseCollector, WsCollector } from '../support/stream-clients';
import { WebhookReceiver } from '../support/webhook-receiver';
import { zipSources } from '../support/zip-writer';
import { elapse, until } from '../support/wait';

/**
 * Per-tenant quotas over real HTTP and WebSocket, on both stores: every quota refuses with its
 * status, code and fields; overrides from the admin API and the CLI take effect; a tenant over its
 * quota leaves the others alone; with Redis, two instances share one count.
 */
jest.setTimeout(180_000);
afterAll(() => stopBackends(), 60_000);

const ENV = {
  QUOTA_OVERRIDES_CACHE_MS: '200',
  // Shorter than the default 500 ms, to keep the suite quick; the pause itself is checked below.
  QUOTA_REFUSAL_DELAY_MS: '100',
  LANE_SWEEP_MS: '200',
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_POLL_MS: '100',
};
const CLI = path.join(__dirname, '..', '..', 'dist', 'src', 'admin-cli.js');
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

/** A request whose answer's headers matter. */
async function call(url: string, method: string, key: string, body?: unknown): Promise<Answer> {
  const res = await fetch(url, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

async function setLimits(url: string, tenantId: string, overrides: unknown) {
  const res = await request(`${url}/admin/tenants/${tenantId}/limits`, 'PUT', overrides, admin);
  if (res.status !== 200) throw new Error(`limits not set: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function upload(
  c: Client,
  url: string,
  kind: 'reducers' | 'projections',
  zip: Buffer,
  parts: Record<string, string> = {},
): Promise<Answer> {
  const form = new FormData();
  form.append('file', new Blob([zip]), 'u.zip');
  for (const [k, v] of Object.entries(parts)) form.append(k, v);
  const res = await fetch(`${url}/${kind}/upload`, { method: 'POST', headers: { 'x-api-key': c.key }, body: form });
  return { status: res.status, headers: res.headers, body: await res.json() };
}

/** Deploys the customer-totals example (keys by customer) and returns its projectionId. */
async function deployProjection(c: Client, url: string, config: unknown): Promise<string> {
  const up = await upload(c, url, 'projections', zipSources(exampleSources('customer-totals')), { config: JSON.stringify(config) });
  expect(up.status).toBe(202);
  const s = await until(
    () => c.get(`/projections/${up.body.uploadId}/status`),
    (r) => r.body?.status === 'compiled' && Boolean(r.body.projectionId),
  );
  return s.body.projectionId;
}

/** A WebSocket upgrade expected to be refused: its HTTP answer. */
function refusedUpgrade(
  url: string,
  projectionId: string,
  key: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: any }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/projections/${projectionId}/stream`, { headers: { 'x-api-key': key } });
    ws.once('open', () => {
      ws.close();
      reject(new Error('upgrade was accepted'));
    });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(body) }));
    });
    ws.once('error', () => undefined);
  });
}

function order(i: number, customer = `cust-${i}`) {
  return { aggregateId: `order-${i}`, eventType: 'OrderPlaced', data: { customerId: customer, lines: [{ sku: 'x', qty: 1, price: 2 }] } };
}

describe.each(STORE_BACKENDS)('quotas on %s', (backend) => {
  let svc: RunningService & { config: { dataDir: string; databaseUrl?: string } };
  let storeEnv: Record<string, string>;

  beforeAll(async () => {
    storeEnv = await envFor(backend);
    svc = await startService({ ...storeEnv, ...ENV });
  });
  afterAll(() => svc?.close());

  it('answers appends past the request quota 429 RATE_LIMITED with Retry-After and the RateLimit fields; another tenant appends on', async () => {
    const a = await newTenant(svc.url, 'noisy');
    const b = await newTenant(svc.url, 'quiet');
    await setLimits(svc.url, a.tenantId, { appendRequests: { quota: 3, windowSeconds: 60 } });
    for (let i = 1; i <= 3; i++) {
      const ok = await call(`${svc.url}/events`, 'POST', a.key, { aggregateId: 'acct-1', eventType: 'Deposited', data: { i } });
      expect(ok.status).toBe(201);
      expect(ok.headers.get('ratelimit-policy')).toBe('"appends";q=3;w=60, "events";q=200000;w=10;es-unit="events"');
      expect(ok.headers.get('ratelimit')).toMatch(new RegExp(`^"appends";r=${3 - i};t=\\d+, "events";r=\\d+;t=\\d+$`));
    }
    for (const path of ['/events', '/events/batch']) {
      const started = Date.now();
      const refused = await call(`${svc.url}${path}`, 'POST', a.key, {
        aggregateId: 'acct-1',
        eventType: 'Deposited',
        data: {},
        events: [{ eventType: 'Deposited', data: {} }],
      });
      // Answered after QUOTA_REFUSAL_DELAY_MS: a client that keeps hammering waits instead of spinning.
      expect(Date.now() - started).toBeGreaterThanOrEqual(95);
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({
        error: 'RATE_LIMITED',
        policy: 'appends',
        limit: 3,
        windowSeconds: 60,
        remaining: 0,
        message: expect.stringContaining('retry in'),
      });
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(20);
      expect(refused.body.retryAfterSeconds).toBe(retryAfter);
      expect(refused.headers.get('ratelimit-policy')).toBe('"appends";q=3;w=60');
      expect(refused.headers.get('ratelimit')).toBe(`"appends";r=0;t=${retryAfter}`);
    }
    // Refused before its body is read: one announced and never sent is answered at once; a large one closes the connection.
    const raw = new RawHttp(svc.url);
    raw.startPost(
      '/events',
      { 'x-api-key': a.key, 'content-type': 'application/json', 'content-length': String(200 * 1024) },
      '{"aggregateId":',
    );
    const early = await raw.response(5_000);
    expect(early.status).toBe(429);
    expect(early.headers['connection']).toBe('close');
    expect(JSON.parse(early.body)).toMatchObject({ error: 'RATE_LIMITED' });
    await raw.closed;
    // Nothing of the refused requests was stored; the other tenant is not touched by A's quota.
    expect((await a.get('/events/acct-1')).body.events).toHaveLength(3);
    for (let i = 0; i < 10; i++)
      expect((await b.post('/events', { aggregateId: 'acct-1', eventType: 'Deposited', data: { i } })).status).toBe(201);
  });

  it('counts every event of a batch against the events quota and refuses, storing nothing, a batch it cannot cover', async () => {
    const t = await newTenant(svc.url, 'batcher');
    await setLimits(svc.url, t.tenantId, { appendEvents: { quota: 10, windowSeconds: 600 } });
    const batch = (n: number) => ({
      aggregateId: 'log-1',
      events: Array.from({ length: n }, (_, i) => ({ eventType: 'Line', data: { i } })),
    });
    const first = await call(`${svc.url}/events/batch`, 'POST', t.key, batch(8));
    expect(first.status).toBe(201);
    expect(first.headers.get('ratelimit')).toMatch(/"events";r=2;t=\d+$/);
    const refused = await call(`${svc.url}/events/batch`, 'POST', t.key, batch(5));
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: 'RATE_LIMITED', policy: 'events', unit: 'events', limit: 10, remaining: 2 });
    expect(refused.body.message).toContain('this request counts 5');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // The request quota it passed and the events quota that refused it, one list per field.
    expect(refused.headers.get('ratelimit-policy')).toBe('"appends";q=20000;w=10, "events";q=10;w=600;es-unit="events"');
    expect(refused.headers.get('ratelimit')).toMatch(/^"appends";r=\d+;t=\d+, "events";r=2;t=\d+$/);
    expect((await t.get('/events/log-1')).body.events).toHaveLength(8);
    // A single append counts one event; a batch validation refuses counts none.
    expect((await t.post('/events', { aggregateId: 'log-1', eventType: 'Line', data: {} })).status).toBe(201);
    expect((await t.post('/events/batch', batch(1001))).status).toBe(400);
    expect((await t.post('/events', { aggregateId: 'log-1', eventType: 'Line', data: {} })).status).toBe(201);
    expect((await t.post('/events', { aggregateId: 'log-1', eventType: 'Line', data: {} })).body).toMatchObject({
      error: 'RATE_LIMITED',
      policy: 'events',
    });
  });

  it('counts reducer and projection uploads together against the uploads quota, refusing before the archive is read', async () => {
    const t = await newTenant(svc.url, 'uploader');
    await setLimits(svc.url, t.tenantId, { uploads: { quota: 2, windowSeconds: 3600 } });
    const ok = await upload(t, svc.url, 'reducers', zipSources(exampleSources('bank-account')), { reducerId: 'bank-1' });
    expect(ok.status).toBe(202);
    expect(ok.headers.get('ratelimit')).toMatch(/^"uploads";r=1;t=\d+$/);
    // Every upload request counts, even one refused for its content.
    expect((await upload(t, svc.url, 'projections', Buffer.from('not a zip'))).status).toBe(400);
    // Over the quota, an upload is answered before its archive is read (this one never sends it).
    const raw = new RawHttp(svc.url);
    raw.startPost('/reducers/upload', {
      'x-api-key': t.key,
      'content-type': 'multipart/form-data; boundary=x',
      'content-length': String(4 * 1024 * 1024),
    });
    expect((await raw.response(5_000)).status).toBe(429);
    await raw.closed;
    for (const kind of ['reducers', 'projections'] as const) {
      const refused = await upload(t, svc.url, kind, zipSources(exampleSources('bank-account')), { reducerId: `bank-${kind}` });
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ error: 'RATE_LIMITED', policy: 'uploads', limit: 2, windowSeconds: 3600 });
      // One upload back every 30 minutes.
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(1700);
      expect(refused.headers.get('ratelimit-policy')).toBe('"uploads";q=2;w=3600');
    }
    expect((await t.get('/reducers/bank-reducers/status')).status).toBe(404);
  });

  it('refuses appends past the stored-events quota with 403 QUOTA_EXCEEDED, storing nothing', async () => {
    const t = await newTenant(svc.url, 'hoarder');
    await setLimits(svc.url, t.tenantId, { storedEvents: 5 });
    expect(
      (await t.post('/events/batch', { aggregateId: 'box-1', events: [1, 2, 3].map((i) => ({ eventType: 'Put', data: { i } })) })).status,
    ).toBe(201);
    expect((await t.post('/events', { aggregateId: 'box-1', eventType: 'Put', data: {} })).status).toBe(201);
    const over = await call(`${svc.url}/events/batch`, 'POST', t.key, {
      aggregateId: 'box-1',
      events: [
        { eventType: 'Put', data: {} },
        { eventType: 'Put', data: {} },
      ],
    });
    expect(over.status).toBe(403);
    expect(over.body).toMatchObject({ error: 'QUOTA_EXCEEDED', quota: 'storedEvents', limit: 5, stored: 4 });
    expect(over.headers.get('retry-after')).toBeNull();
    expect((await t.post('/events', { aggregateId: 'box-1', eventType: 'Put', data: {} })).status).toBe(201);
    expect((await t.post('/events', { aggregateId: 'box-2', eventType: 'Put', data: {} })).body).toMatchObject({
      error: 'QUOTA_EXCEEDED',
      stored: 5,
    });
    expect((await t.get('/events/box-1')).body.events).toHaveLength(5);
  });

  it('caps a tenant’s streams, all its keys and both transports together, with 429 before the handshake', async () => {
    const a = await newTenant(svc.url, 'watcher');
    const b = await newTenant(svc.url, 'other-watcher');
    const projectionId = await deployProjection(a, svc.url, { notifications: { sse: true } });
    await setLimits(svc.url, a.tenantId, { streams: 2 });
    const secondKey = (await request(`${svc.url}/admin/tenants/${a.tenantId}/keys`, 'POST', undefined, admin)).body.apiKey;
    const ws = await WsCollector.open(svc.url, projectionId, a.key);
    const sse = await SseCollector.open(svc.url, projectionId, secondKey);
    try {
      const refused = await refusedUpgrade(svc.url, projectionId, a.key);
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ error: 'TOO_MANY_STREAMS', scope: 'tenant', limit: 2, policy: 'streams' });
      expect(refused.headers['retry-after']).toBe('5');
      expect(refused.headers['ratelimit-policy']).toBe('"streams";q=2;qu="concurrent-requests"');
      expect(refused.headers['ratelimit']).toBe('"streams";r=0;t=5');
      await expect(SseCollector.open(svc.url, projectionId, secondKey)).rejects.toMatchObject({
        status: 429,
        body: { error: 'TOO_MANY_STREAMS', scope: 'tenant' },
      });
      // Another tenant's streams are its own.
      const bProjection = await deployProjection(b, svc.url, {});
      const other = await WsCollector.open(svc.url, bProjection, b.key);
      await other.close();
      // A slot comes back when its stream closes.
      await ws.close();
      const again = await until(
        () => WsCollector.open(svc.url, projectionId, a.key).catch(() => null),
        (c) => c !== null,
        10_000,
      );
      await again!.close();
    } finally {
      await ws.close();
      sse.close();
    }
  });

  it('holds a tenant’s webhook attempts in flight to its quota while another tenant’s go on in parallel', async () => {
    const a = await newTenant(svc.url, 'hooked');
    const b = await newTenant(svc.url, 'other-hooked');
    const receivers = { a: await new WebhookReceiver().start(), b: await new WebhookReceiver().start() };
    try {
      await setLimits(svc.url, a.tenantId, { webhooksInFlight: 2 });
      for (const [t, r] of [
        [a, receivers.a],
        [b, receivers.b],
      ] as const) {
        r.delayMs = 300;
        const secret = (await t.post('/webhooks/rotate', {})).body.webhook.secret;
        r.secrets = [secret];
        await deployProjection(t, svc.url, { notifications: { webhook: { url: r.url } } });
      }
      // Twelve customers: twelve state keys, whose deliveries may run side by side.
      await Promise.all([a, b].flatMap((t) => Array.from({ length: 12 }, (_, i) => t.post('/events', order(i)))));
      await until(
        () => receivers.a.accepted.length + receivers.b.accepted.length,
        (n) => n >= 24,
      );
      expect(receivers.a.maxInFlight).toBeLessThanOrEqual(2);
      expect(receivers.a.maxInFlight).toBeGreaterThanOrEqual(1);
      expect(receivers.b.maxInFlight).toBeGreaterThan(2);
    } finally {
      await receivers.a.stop();
      await receivers.b.stop();
    }
  });

  it('shows and replaces a tenant’s limits through the admin API, refusing what is not a limit', async () => {
    const t = await newTenant(svc.url, 'managed');
    const url = `${svc.url}/admin/tenants/${t.tenantId}/limits`;
    const shown = await request(url, 'GET', undefined, admin);
    expect(shown.status).toBe(200);
    expect(shown.body).toEqual({
      tenantId: t.tenantId,
      limits: shown.body.defaults,
      overrides: {},
      defaults: {
        appendRequests: { quota: 20_000, windowSeconds: 10 },
        appendEvents: { quota: 200_000, windowSeconds: 10 },
        uploads: { quota: 60, windowSeconds: 3600 },
        streams: 500,
        webhooksInFlight: 16,
        storedEvents: 0,
        projections: 100,
        keysPerProjection: 100_000,
        pendingDeliveries: 10_000,
        eventWebhooks: 10,
      },
      updatedAt: null,
    });
    const put = await request(url, 'PUT', { appendRequests: { quota: 1, windowSeconds: 600 }, streams: 3 }, admin);
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      limits: { appendRequests: { quota: 1, windowSeconds: 600 }, streams: 3, webhooksInFlight: 16 },
      overrides: { streams: 3 },
    });
    expect(new Date(put.body.updatedAt).toISOString()).toBe(put.body.updatedAt);
    expect((await t.post('/events', { aggregateId: 'm-1', eventType: 'E', data: {} })).status).toBe(201);
    expect((await t.post('/events', { aggregateId: 'm-1', eventType: 'E', data: {} })).status).toBe(429);
    // Back to the defaults: the quota no longer bites.
    expect((await request(url, 'PUT', {}, admin)).body.overrides).toEqual({});
    expect((await t.post('/events', { aggregateId: 'm-1', eventType: 'E', data: {} })).status).toBe(201);

    expect(await request(url, 'PUT', { appendRequestz: 5 }, admin)).toMatchObject({
      status: 400,
      body: { error: 'VALIDATION_FAILED', field: 'appendRequestz' },
    });
    expect(await request(url, 'PUT', { uploads: { quota: 5, windowSeconds: 0 } }, admin)).toMatchObject({
      status: 400,
      body: { field: 'uploads' },
    });
    expect(await request(`${svc.url}/admin/tenants/nobody/limits`, 'PUT', {}, admin)).toMatchObject({
      status: 404,
      body: { error: 'NOT_FOUND' },
    });
    expect(await request(`${svc.url}/admin/tenants/nobody/limits`, 'GET', undefined, admin)).toMatchObject({ status: 404 });
    expect((await request(url, 'GET', undefined, { authorization: 'Bearer wrong-token-0123456789' })).status).toBe(401);
    expect((await request(url, 'GET', undefined, { 'x-api-key': t.key })).status).toBe(401);
  });

  it('takes an override set with the admin CLI on the same store within QUOTA_OVERRIDES_CACHE_MS', async () => {
    const t = await newTenant(svc.url, 'cli-managed');
    expect((await t.post('/events', { aggregateId: 'c-1', eventType: 'E', data: {} })).status).toBe(201);
    const env = { ...process.env, DATA_DIR: svc.config.dataDir, ...storeEnv };
    const cli = (...args: string[]) => execFileSync(process.execPath, [CLI, ...args], { env, encoding: 'utf8' });
    const out = cli('set-limits', t.tenantId, 'appendRequests=2/1h', 'streams=4');
    expect(out).toContain('appendRequests\t2/1h\toverride');
    expect(out).toContain('streams\t4\toverride');
    expect(out).toContain('uploads\t60/1h\tdefault');
    expect(cli('get-limits', t.tenantId)).toContain('appendRequests\t2/1h\toverride');
    expect(() => cli('set-limits', t.tenantId, 'appendRequests=lots')).toThrow(/appendRequests/);
    await elapse(300, "the service caches a tenant's limits (200 ms here)");
    // Two more under the new quota (the bucket is clamped to it), then refused.
    const codes = [];
    for (let i = 0; i < 3; i++) codes.push((await t.post('/events', { aggregateId: 'c-1', eventType: 'E', data: {} })).status);
    expect(codes).toEqual([201, 201, 429]);
    expect(cli('set-limits', t.tenantId, 'appendRequests=default')).toContain('appendRequests\t20000/10s\tdefault');
  });
});

describe('quotas across two instances sharing PostgreSQL and Redis', () => {
  let one: RunningService;
  let two: RunningService;

  beforeAll(async () => {
    // One database and one Redis for both: what two replicas behind a load balancer share.
    const env = { ...(await envFor('postgres')), ...(await schedulerEnv('bullmq')), ...ENV };
    one = await startService(env);
    two = await startService(env);
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
  });

  it('admits a tenant’s quota once across both instances, not once per instance', async () => {
    const t = await newTenant(one.url, 'spread');
    await setLimits(one.url, t.tenantId, { appendRequests: { quota: 6, windowSeconds: 600 } });
    const codes: number[] = [];
    for (let i = 0; i < 14; i++) {
      const r = await call(`${(i % 2 ? two : one).url}/events`, 'POST', t.key, { aggregateId: 's-1', eventType: 'E', data: { i } });
      codes.push(r.status);
      if (r.status === 429) expect(r.headers.get('ratelimit')).toMatch(/^"appends";r=0;t=\d+$/);
    }
    expect(codes.filter((s) => s === 201)).toHaveLength(6);
    expect(codes.filter((s) => s === 429)).toHaveLength(8);
    // Another tenant, on either instance, has its own.
    const other = await newTenant(two.url, 'spread-other');
    expect((await clientFor(one.url, other.key).post('/events', { aggregateId: 's-1', eventType: 'E', data: {} })).status).toBe(201);
  });

  it('counts a tenant’s streams on both instances together', async () => {
    const t = await newTenant(one.url, 'spread-watcher');
    const projectionId = await deployProjection(t, one.url, {});
    await setLimits(one.url, t.tenantId, { streams: 1 });
    const ws = await WsCollector.open(one.url, projectionId, t.key);
    try {
      expect(await refusedUpgrade(two.url, projectionId, t.key)).toMatchObject({
        status: 429,
        body: { error: 'TOO_MANY_STREAMS', scope: 'tenant' },
      });
    } finally {
      await ws.close();
    }
    const again = await until(
      () => WsCollector.open(two.url, projectionId, t.key).catch(() => null),
      (c) => c !== null,
      10_000,
    );
    await again!.close();
  });
});
