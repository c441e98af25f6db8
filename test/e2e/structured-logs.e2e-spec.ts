import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ADMIN_TOKEN, clientFor, newTenant, request, ServiceProcess } from '../support/service-harness';
import { elapse } from '../support/wait';

// Structured logs (README "Logs", docs/operations.md): at the default level every line on stdout is
// one JSON object, each request has a line with its id, tenant, route template, status and duration,
// and no key, token, webhook secret or event data is ever in one.

/** In no line: the catch-all for prefixed keys must not be what hides them. */
const QUERY_KEY = 'plain-query-key-never-logged-0123456789';
const PAYLOAD_MARK = 'payload-mark-7f3a9c1e-never-logged';

let svc: ServiceProcess;
let dataDir: string;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-logs-'));
  // LOG_LEVEL and LOG_FORMAT as npm start has them: unset.
  svc = new ServiceProcess({ DATA_DIR: dataDir, LOG_LEVEL: '', LOG_FORMAT: '' });
  await svc.start();
}, 120_000);

afterAll(async () => {
  if (svc?.child.exitCode === null) await svc.kill('SIGTERM');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

it('writes only JSON lines, one per request with its fields, and none holds a key, token, secret or event data', async () => {
  const tenant = await newTenant(svc.url, 'logs');
  const client = clientFor(svc.url, tenant.key);
  expect((await client.get('/auth/whoami')).status).toBe(200);

  const event = { aggregateId: 'order-1', eventType: 'OrderPlaced', data: { note: PAYLOAD_MARK } };
  const appended = await client.post('/events', event, { 'x-request-id': 'client-trace-1' });
  expect(appended.status).toBe(201);
  expect(
    (await client.post('/events/batch', { aggregateId: 'order-1', events: [{ eventType: 'OrderPaid', data: { again: PAYLOAD_MARK } }] }))
      .status,
  ).toBe(201);
  // Refused appends carry the payload too.
  expect((await client.post('/events', { aggregateId: 'order-1', data: { note: PAYLOAD_MARK } })).status).toBe(400);
  expect((await client.post('/events', `{"aggregateId":"order-1","eventType":"X","data":{"note":"${PAYLOAD_MARK}"`)).status).toBe(400);

  const rotated = await client.post('/webhooks/rotate', {});
  expect(rotated.status).toBe(200);
  const webhookSecret: string = rotated.body.webhook.secret;
  expect(webhookSecret).toMatch(/^whsec_/);
  // The secret sent back, where a careless log would echo it.
  expect(
    (
      await client.post(
        '/events',
        { aggregateId: 'order-2', eventType: 'Echo', data: { webhookSecret } },
        { 'x-webhook-secret': webhookSecret },
      )
    ).status,
  ).toBe(201);

  expect((await request(`${svc.url}/projections/none/stream?apiKey=${QUERY_KEY}`, 'GET')).status).toBe(401);
  expect((await request(`${svc.url}/events/order-1?apiKey=${tenant.key}`, 'GET')).status).toBe(401);
  expect((await request(`${svc.url}/auth/whoami`, 'GET', undefined, { 'x-api-key': QUERY_KEY })).status).toBe(401);
  expect((await request(`${svc.url}/admin/tenants`, 'GET', undefined, { authorization: `Bearer ${ADMIN_TOKEN}` })).status).toBe(200);
  expect((await request(`${svc.url}/admin/tenants`, 'GET', undefined, { authorization: `Bearer ${QUERY_KEY}` })).status).toBe(401);
  expect((await client.get('/events/order-1')).body.events[0].data).toEqual({ note: PAYLOAD_MARK });

  await elapse(300, "the last requests' log lines are written");
  expect(await svc.kill('SIGTERM')).toBe(0);

  const lines = svc.stdout.split('\n').filter((l) => l !== '');
  const entries = lines.map((line) => {
    try {
      return JSON.parse(line) as Record<string, any>;
    } catch {
      throw new Error(`not a JSON line: ${line}`);
    }
  });
  for (const e of entries) expect(e).toMatchObject({ level: expect.any(String), time: expect.any(String), msg: expect.any(String) });
  // Nest's own lines too, with their context as a field.
  expect(entries).toContainEqual(expect.objectContaining({ level: 'info', context: 'Main', msg: expect.stringMatching(/^listening on/) }));

  const requests = entries.filter((e) => e.msg === 'request');
  expect(requests.length).toBeGreaterThanOrEqual(12);
  for (const r of requests) {
    expect(r).toMatchObject({
      reqId: expect.any(String),
      method: expect.any(String),
      status: expect.any(Number),
      durationMs: expect.any(Number),
    });
    // A route template (or null when no route matched), never the URL with its ids or query string.
    expect(r.route === null || (typeof r.route === 'string' && !r.route.includes('?'))).toBe(true);
  }
  expect(requests).toContainEqual(
    expect.objectContaining({ reqId: 'client-trace-1', tenantId: tenant.tenantId, method: 'POST', route: '/events', status: 201 }),
  );
  expect(requests).toContainEqual(
    expect.objectContaining({ tenantId: tenant.tenantId, method: 'GET', route: '/events/:aggregateId', status: 200 }),
  );
  // Refused before authentication: no tenant.
  const refused = requests.filter((r) => r.status === 401);
  expect(refused.length).toBe(4);
  for (const r of refused) expect(r.tenantId).toBeUndefined();

  for (const secret of [tenant.key, ADMIN_TOKEN, QUERY_KEY, webhookSecret, webhookSecret.slice('whsec_'.length), PAYLOAD_MARK]) {
    expect({ secret, lines: lines.filter((l) => l.includes(secret)) }).toEqual({ secret, lines: [] });
  }
  expect(svc.output.includes(PAYLOAD_MARK) || svc.output.includes(tenant.key)).toBe(false);
});
