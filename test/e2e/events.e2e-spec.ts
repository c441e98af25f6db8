import { newTenant, request, RunningService, startService, ADMIN_TOKEN, clientFor, Client } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';

afterAll(() => stopBackends(), 60_000);

describe.each(STORE_BACKENDS)('events API over HTTP on %s', (backend) => {
  let svc: RunningService;
  let a: Client;
  let b: Client;

  beforeAll(async () => {
    svc = await startService(await envFor(backend));
    a = await newTenant(svc.url, 'tenant-a');
    b = await newTenant(svc.url, 'tenant-b');
  }, 120_000);
  afterAll(() => svc?.close());

  it('appends one event and answers with the contract’s fields', async () => {
    const res = await a.post('/events', { aggregateId: 'order-1', eventType: 'OrderPlaced', data: { total: 5 } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      eventId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      aggregateId: 'order-1',
      aggregateType: 'order',
      version: 1,
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      position: 1,
    });
  });

  it('appends a batch atomically and reports start and end versions', async () => {
    const res = await a.post('/events/batch', {
      aggregateId: 'cart-1',
      aggregateType: 'cart',
      correlationId: 'corr-1',
      metadata: { user: 'u1' },
      events: [
        { eventType: 'ItemAdded', data: { sku: 'a' } },
        { eventType: 'ItemAdded', data: { sku: 'b' } },
        { eventType: 'CheckedOut', data: {} },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ aggregateId: 'cart-1', aggregateType: 'cart', startVersion: 1, endVersion: 3 });
    expect(res.body.eventIds).toHaveLength(3);
    expect(res.body.timestamp).toMatch(/Z$/);

    const read = await a.get('/events/cart-1');
    expect(read.status).toBe(200);
    expect(read.body.events.map((e: any) => [e.version, e.eventType, e.data.sku ?? null])).toEqual([
      [1, 'ItemAdded', 'a'],
      [2, 'ItemAdded', 'b'],
      [3, 'CheckedOut', null],
    ]);
    expect(read.body.events[0]).toMatchObject({
      eventId: res.body.eventIds[0],
      aggregateId: 'cart-1',
      correlationId: 'corr-1',
      metadata: { user: 'u1' },
    });
  });

  it('stores none of a batch when its expectedVersion is stale, and says what it is', async () => {
    await a.post('/events', { aggregateId: 'acct-9', eventType: 'Opened', data: {} });
    const res = await a.post('/events/batch', {
      aggregateId: 'acct-9',
      expectedVersion: 0,
      events: [
        { eventType: 'X', data: {} },
        { eventType: 'Y', data: {} },
      ],
    });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: 'VERSION_CONFLICT', expectedVersion: 0, actualVersion: 1 });
    expect((await a.get('/events/acct-9')).body.events).toHaveLength(1);
  });

  it('accepts expectedVersion that matches and moves on', async () => {
    const ok = await a.post('/events', { aggregateId: 'acct-9', eventType: 'Deposited', data: { n: 1 }, expectedVersion: 1 });
    expect(ok.status).toBe(201);
    expect(ok.body.version).toBe(2);
  });

  it('fixes the aggregate type by the first event and refuses another', async () => {
    const res = await a.post('/events', { aggregateId: 'order-1', aggregateType: 'invoice', eventType: 'X', data: {} });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: 'AGGREGATE_TYPE_MISMATCH', actualAggregateType: 'order' });
  });

  it('pages a stream with fromVersion and limit', async () => {
    await a.post('/events/batch', {
      aggregateId: 'log-1',
      events: Array.from({ length: 7 }, (_, i) => ({ eventType: 'Line', data: { i } })),
    });
    const p1 = await a.get('/events/log-1?limit=3');
    expect(p1.body.events.map((e: any) => e.version)).toEqual([1, 2, 3]);
    expect(p1.body.nextFromVersion).toBe(4);
    const last = await a.get('/events/log-1?fromVersion=7&limit=3');
    expect(last.body.events.map((e: any) => e.version)).toEqual([7]);
    expect(last.body.nextFromVersion).toBeUndefined();
    expect((await a.get('/events/log-1?limit=100000')).body).toMatchObject({ error: 'VALIDATION_FAILED', field: 'limit' });
  });

  it('answers an unknown aggregate with an empty list', async () => {
    expect(await a.get('/events/nobody-1')).toEqual({ status: 200, body: { events: [] } });
  });

  describe('bad input gets a clear 4xx and stores nothing', () => {
    const cases: [string, unknown, number, string, string?][] = [
      ['missing aggregateId', { eventType: 'X', data: {} }, 400, 'VALIDATION_FAILED', 'aggregateId'],
      ['number as eventType', { aggregateId: 'bad-1', eventType: 7, data: {} }, 400, 'VALIDATION_FAILED', 'eventType'],
      ['array as data', { aggregateId: 'bad-1', eventType: 'X', data: [1] }, 400, 'VALIDATION_FAILED', 'data'],
      ['missing data', { aggregateId: 'bad-1', eventType: 'X' }, 400, 'VALIDATION_FAILED', 'data'],
      [
        'negative expectedVersion',
        { aggregateId: 'bad-1', eventType: 'X', data: {}, expectedVersion: -1 },
        400,
        'VALIDATION_FAILED',
        'expectedVersion',
      ],
      ['id with a control character', { aggregateId: 'bad\u0001', eventType: 'X', data: {} }, 400, 'VALIDATION_FAILED', 'aggregateId'],
      ['id over 256 bytes of UTF-8', { aggregateId: 'é'.repeat(129), eventType: 'X', data: {} }, 400, 'VALIDATION_FAILED', 'aggregateId'],
      ['array body', [1, 2], 400, 'VALIDATION_FAILED', 'body'],
      ['data too large', { aggregateId: 'bad-1', eventType: 'X', data: { s: 'x'.repeat(300_000) } }, 413, 'PAYLOAD_TOO_LARGE', 'data'],
      ['metadata as string', { aggregateId: 'bad-1', eventType: 'X', data: {}, metadata: 'm' }, 400, 'VALIDATION_FAILED', 'metadata'],
    ];
    it.each(cases)('%s', async (_name, body, status, code, field) => {
      const res = await a.post('/events', body);
      expect(res.status).toBe(status);
      expect(res.body.error).toBe(code);
      expect(typeof res.body.message).toBe('string');
      if (field) expect(res.body.field).toBe(field);
      expect((await a.get('/events/bad-1')).body.events).toEqual([]);
    });

    it('malformed JSON', async () => {
      const res = await a.post('/events', '{"aggregateId": "bad-1", "eventType": ');
      expect(res).toMatchObject({ status: 400, body: { error: 'MALFORMED_JSON' } });
    });

    it('a body that is not JSON', async () => {
      const res = await request(`${svc.url}/events`, 'POST', undefined, { 'x-api-key': a.key, 'content-type': 'text/plain' });
      expect(res.status).toBe(415);
      const form = await fetch(`${svc.url}/events`, {
        method: 'POST',
        headers: { 'x-api-key': a.key, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'aggregateId=bad-1',
      });
      expect(form.status).toBe(415);
      expect(((await form.json()) as any).error).toBe('UNSUPPORTED_MEDIA_TYPE');
    });

    it('a body over the request limit', async () => {
      const res = await a.post('/events/batch', {
        aggregateId: 'bad-1',
        events: [{ eventType: 'X', data: { s: 'x'.repeat(5 * 1024 * 1024) } }],
      });
      expect(res).toMatchObject({ status: 413, body: { error: 'PAYLOAD_TOO_LARGE' } });
    });

    it('nesting deeper than the limit, however deep', async () => {
      const deep = '{"aggregateId":"bad-1","eventType":"X","data":{"a":' + '['.repeat(50_000) + ']'.repeat(50_000) + '}}';
      const res = await a.post('/events', deep);
      expect(res).toMatchObject({ status: 400, body: { error: 'VALIDATION_FAILED', field: 'data' } });
    });

    it('an empty batch, an oversized batch, a bad element', async () => {
      expect((await a.post('/events/batch', { aggregateId: 'bad-1', events: [] })).body).toMatchObject({
        error: 'VALIDATION_FAILED',
        field: 'events',
      });
      const many = Array.from({ length: 1001 }, () => ({ eventType: 'X', data: {} }));
      expect((await a.post('/events/batch', { aggregateId: 'bad-1', events: many })).body).toMatchObject({ field: 'events' });
      const bad = await a.post('/events/batch', { aggregateId: 'bad-1', events: [{ eventType: 'X', data: {} }, { eventType: 'Y' }] });
      expect(bad).toMatchObject({ status: 400, body: { error: 'VALIDATION_FAILED', field: 'events[1].data' } });
      expect((await a.get('/events/bad-1')).body.events).toEqual([]);
    });

    it('an unknown route', async () => {
      expect(await a.get('/nowhere')).toMatchObject({ status: 404, body: { error: 'NOT_FOUND' } });
    });
  });

  describe('tenancy', () => {
    it('needs a key on every endpoint but health', async () => {
      expect(await request(`${svc.url}/health`, 'GET')).toEqual({ status: 200, body: { status: 'ok' } });
      const none = await request(`${svc.url}/events/order-1`, 'GET');
      expect(none).toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED' } });
      const wrong = await request(`${svc.url}/auth/whoami`, 'GET', undefined, { 'x-api-key': 'esk_wrong' });
      expect(wrong).toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED' } });
      const post = await request(`${svc.url}/events`, 'POST', { aggregateId: 'x-1', eventType: 'X', data: {} });
      expect(post.status).toBe(401);
    });

    it('tells a key’s tenant', async () => {
      const res = await a.get('/auth/whoami');
      expect(res).toEqual({
        status: 200,
        body: {
          tenantId: a.tenantId,
          name: 'tenant-a',
          createdAt: expect.stringMatching(/Z$/),
          // A tenant's first key is made without scopes: it holds every one (README "API keys and scopes").
          keyId: expect.stringMatching(/^key_/),
          scopes: ['events:read', 'events:write', 'events:erase', 'state:read', 'deploy', 'keys:manage'],
        },
      });
    });

    it('never shows one tenant another’s aggregates or positions', async () => {
      expect((await b.get('/events/order-1')).body).toEqual({ events: [] });
      const own = await b.post('/events', { aggregateId: 'order-1', eventType: 'Mine', data: {}, expectedVersion: 0 });
      expect(own.status).toBe(201);
      expect(own.body).toMatchObject({ version: 1, position: 1 });
      expect((await b.get('/events/order-1')).body.events.map((e: any) => e.eventType)).toEqual(['Mine']);
      expect((await a.get('/events/order-1')).body.events.map((e: any) => e.eventType)).toEqual(['OrderPlaced']);
    });

    it('issues and revokes keys through the admin API', async () => {
      const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
      const issued = await request(`${svc.url}/admin/tenants/${a.tenantId}/keys`, 'POST', {}, admin);
      expect(issued.status).toBe(201);
      expect(issued.body).toEqual({ keyId: expect.any(String), apiKey: expect.stringMatching(/^esk_/) });
      const second = clientFor(svc.url, issued.body.apiKey);
      expect((await second.get('/auth/whoami')).body.tenantId).toBe(a.tenantId);
      const del = await fetch(`${svc.url}/admin/tenants/${a.tenantId}/keys/${issued.body.keyId}`, { method: 'DELETE', headers: admin });
      expect(del.status).toBe(204);
      expect((await second.get('/auth/whoami')).status).toBe(401);
      expect((await a.get('/auth/whoami')).status).toBe(200);
      const again = await fetch(`${svc.url}/admin/tenants/${a.tenantId}/keys/${issued.body.keyId}`, { method: 'DELETE', headers: admin });
      expect(again.status).toBe(404);
      expect((await request(`${svc.url}/admin/tenants/nope/keys`, 'POST', {}, admin)).status).toBe(404);
    });

    it('guards the admin API with its token', async () => {
      expect((await request(`${svc.url}/admin/tenants`, 'POST', { name: 'x' })).status).toBe(401);
      const wrong = await request(`${svc.url}/admin/tenants`, 'POST', { name: 'x' }, { authorization: 'Bearer nope' });
      expect(wrong).toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED' } });
      const tenantKey = await request(`${svc.url}/admin/tenants`, 'POST', { name: 'x' }, { authorization: `Bearer ${a.key}` });
      expect(tenantKey.status).toBe(401);
      const noName = await request(`${svc.url}/admin/tenants`, 'POST', {}, { authorization: `Bearer ${ADMIN_TOKEN}` });
      expect(noName).toMatchObject({ status: 400, body: { error: 'VALIDATION_FAILED', field: 'name' } });
    });
  });
});

describe('service configuration', () => {
  it('turns the admin API off without ADMIN_TOKEN and honours BOOTSTRAP_API_KEY', async () => {
    const svc = await startService({ ADMIN_TOKEN: undefined, BOOTSTRAP_API_KEY: 'bootstrap-key-for-tests-0001' });
    try {
      const admin = await request(`${svc.url}/admin/tenants`, 'POST', { name: 'x' }, { authorization: 'Bearer anything-at-all' });
      expect(admin).toMatchObject({ status: 403, body: { error: 'ADMIN_DISABLED' } });
      const who = await clientFor(svc.url, 'bootstrap-key-for-tests-0001').get('/auth/whoami');
      expect(who).toMatchObject({ status: 200, body: { name: 'bootstrap' } });
    } finally {
      await svc.close();
    }
  });
});
