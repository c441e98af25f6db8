import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { exampleSources } from '../support/runtime-harness';
import { ADMIN_TOKEN, clientFor, newTenant, request, ServiceProcess } from '../support/service-harness';
import { envFor, STORE_BACKENDS, StoreBackend, stopBackends } from '../support/store-backends';
import { SseCollector, WsCollector } from '../support/stream-clients';
import { deployReducer, projectionActive, projectionPromoted, until, uploadProjection } from '../support/tenant-code';
import { normalizeSql, splitStatements, unscopedTenantTables } from '../support/tenant-sql';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * The precondition of docs/scaling.md (tenants as the distribution key): every statement the store
 * runs on tenant data filters on the tenant. The SQL is what the built service (dist/src/main.js)
 * really hands to better-sqlite3 or pg — in every thread, background sweeps included — recorded by
 * test/support/sql-capture.preload.ts while a workload touches every capability over HTTP; each
 * distinct statement is then checked by test/support/tenant-sql.ts. The statements that span
 * tenants by design are listed below with why; docs/scaling.md says what each becomes when tenants
 * are spread over several databases.
 */
jest.setTimeout(300_000);
afterAll(() => stopBackends(), 60_000);

/** Tables of the service itself, not of a tenant: the tenant registry and the key → tenant lookup. */
const GLOBAL_TABLES = new Set(['tenants', 'api_keys', 'schema_migrations']);

interface Allowed {
  name: string;
  why: string;
  /** Matched against the statement with whitespace collapsed. */
  match: RegExp;
}

/** Statements that cover every tenant on purpose. Each must still be met by the workload (a stale entry fails). */
const ALLOWED: Allowed[] = [
  {
    name: 'lane sweep',
    why: 'LaneEngine.sweep (every LANE_SWEEP_MS): one statement names the live versions with work and the tombstones, all tenants',
    match: /^SELECT 'live' AS kind, v\.tenant_id, .* FROM dropped_versions d$/,
  },
  {
    name: 'live versions at start',
    why: 'LaneEngine start and GET /admin/lanes: every live projection version of every tenant, once, to start their routers',
    match:
      /^SELECT v\.\* FROM projection_versions v JOIN projections p ON p\.tenant_id = v\.tenant_id AND \(p\.active_version = v\.version_id OR p\.pending_version = v\.version_id\)$/,
  },
  {
    name: 'orphan lanes (admin)',
    why: 'GET /admin/lanes: lane and inbox rows that no live version owns, all tenants (an operator view)',
    match: /^SELECT tenant_id, version_id, SUM\(lanes\) AS lanes, SUM\(inbox\) AS inbox FROM \(/,
  },
  {
    name: 'compile queue tenants',
    why: 'CompileQueue.dispatch: which tenants have uploads pending and unclaimed (the fair ring of tenants), all tenants',
    match:
      /^SELECT tenant_id FROM uploads WHERE status = 'pending' AND \(claim_until IS NULL OR claim_until < (\?|\$1)\) GROUP BY tenant_id/,
  },
  {
    name: 'webhook backlog scan',
    why: 'WebhookDispatcher: projections with notifications not yet turned into deliveries, all tenants',
    match:
      /^SELECT h\.tenant_id, h\.projection_id FROM notification_heads h JOIN projections p .* WHERE h\.last_sequence > h\.webhook_sequence/,
  },
  {
    name: 'webhook due tenants',
    why: 'WebhookDispatcher: a loose index walk over the tenants with due deliveries (tenants served in turn), all tenants',
    match: /^WITH RECURSIVE t\(tenant_id\) AS \( SELECT \(SELECT d\.tenant_id FROM webhook_deliveries d WHERE d\.status = 'pending'/,
  },
  {
    name: 'webhook delivery retention',
    why: 'the retention sweep: delivered and dead deliveries older than their keep time, all tenants',
    match: /^DELETE FROM webhook_deliveries WHERE status = '(delivered|dead)' AND updated_at < (\?|\$1)$/,
  },
  {
    name: 'webhook head repair',
    why: "WebhookDispatcher's repair sweep (every WEBHOOK_REPAIR_MS): keys whose waiting deliveries have no head, all tenants (each is then mended under its key's lock)",
    match:
      /^SELECT w\.tenant_id, w\.projection_id, w\.state_key, w\.sequence FROM webhook_deliveries w WHERE w\.status = 'waiting' AND NOT EXISTS/,
  },
  {
    name: 'event webhooks: any active',
    why: 'EventWebhookDispatcher (every WEBHOOK_POLL_MS): whether any tenant has an active event webhook; while none has, appends wake nothing',
    match: /^SELECT 1 AS one FROM event_webhooks WHERE status = 'active' LIMIT 1$/,
  },
  {
    name: 'event webhook poll',
    why: 'EventWebhookDispatcher (every WEBHOOK_POLL_MS, and on appends): the active event webhooks of every tenant that are due and have events after their cursor',
    match:
      /^SELECT w\.tenant_id, w\.webhook_id FROM event_webhooks w JOIN tenant_heads h ON h\.tenant_id = w\.tenant_id WHERE w\.status = 'active'/,
  },
  {
    name: 'notification retention',
    why: 'NotificationRetention.sweep: projections with notifications past NOTIFICATIONS_KEEP_*, all tenants (each is then pruned by tenant)',
    match: /^SELECT h\.tenant_id, h\.projection_id FROM notification_heads h WHERE h\.last_sequence - h\.pruned_sequence > /,
  },
  {
    name: 'metrics gauges',
    why: 'GET /metrics: the per-projection gauges and the compile queue depth, read from the store for all tenants at each scrape',
    match:
      /^(SELECT v\.tenant_id, v\.projection_id, v\.version_id, CASE WHEN p\.active_version = v\.version_id THEN 'active'|SELECT COUNT\(\*\) AS n FROM uploads WHERE status = 'pending'$)/,
  },
  {
    name: 'group commit (PostgreSQL)',
    why: 'the append group commit: one statement for the appends of several tenants, each row naming its tenant through the parameter arrays (k.t, c.t)',
    match:
      /(JOIN unnest\(\$1::text\[\], \$2::text\[\]\) AS k\(t, a\) ON s\.tenant_id = k\.t|^WITH chk AS \( SELECT count\(\*\) AS stale FROM json_to_recordset\(\$1::json\) AS c\(t text)/,
  },
  {
    name: 'idempotency key sweep',
    why: 'IdempotencyKeySweep (every IDEMPOTENCY_KEYS_SWEEP_MS): expired idempotency keys of all tenants, oldest first, a bounded chunk',
    match:
      /^DELETE FROM idempotency_keys WHERE \(tenant_id, idem_key\) IN \( SELECT tenant_id, idem_key FROM idempotency_keys WHERE created_at < (\?|\$1) ORDER BY created_at LIMIT/,
  },
  {
    name: 'idempotency keys of a group commit (PostgreSQL)',
    why: 'the group commit reads (and, under the tenants lock, purges expired) keys of several tenants in one statement, each row naming its tenant through the parameter arrays (q.t)',
    match:
      /unnest\(\$1::text\[\], \$2::text\[\], \$3::bigint\[\]\) AS q\(t, key, nb\) (WHERE k\.tenant_id = q\.t|CROSS JOIN LATERAL \(SELECT \* FROM idempotency_keys i WHERE i\.tenant_id = q\.t )/,
  },
];

const preload = path.join(__dirname, '..', '..', 'dist', 'test', 'support', 'sql-capture.preload.js');
const CONTROL = /^(begin|commit|rollback|savepoint|release|pragma|set|show|select \?|select 0|vacuum|analyze)\b/i;
const usedAllowances = new Set<string>();

/** Tables with a tenant_id column, read from the CREATE TABLE statements the service ran (its migrations). */
function tenantTablesFrom(statements: string[]): Set<string> {
  const tables = new Set<string>();
  for (const text of statements) {
    for (const s of splitStatements(text)) {
      if (s[0] !== 'create' || s[1] !== 'table') continue;
      const name = s[2] === 'if' ? s[5] : s[2];
      if (s.includes('tenant_id') && !GLOBAL_TABLES.has(name)) tables.add(name);
    }
  }
  return tables;
}

async function workload(svc: ServiceProcess, receiver: WebhookReceiver): Promise<void> {
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const t = await newTenant(svc.url, 'sql-one');
  const other = await newTenant(svc.url, 'sql-two');
  expect((await t.get('/auth/whoami')).status).toBe(200);
  expect((await request(`${svc.url}/admin/tenants`, 'GET', undefined, admin)).status).toBe(200);
  const key = await request(`${svc.url}/admin/tenants/${other.tenantId}/keys`, 'POST', {}, admin);
  expect(key.status).toBe(201);
  expect(
    (await request(`${svc.url}/admin/tenants/${other.tenantId}/keys/${key.body.keyId}`, 'DELETE', undefined, admin)).status,
  ).toBeLessThan(300);
  expect((await request(`${svc.url}/admin/tenants/${other.tenantId}/limits`, 'PUT', { projections: 50 }, admin)).status).toBe(200);
  expect((await request(`${svc.url}/admin/tenants/${other.tenantId}/limits`, 'GET', undefined, admin)).status).toBe(200);

  await deployReducer(svc.url, t.key, 'orders', exampleSources('orders'));
  const up = await uploadProjection(svc.url, t.key, exampleSources('customer-totals'), {
    notifications: { webhook: { url: receiver.url }, sse: true },
  });
  receiver.secrets = [up.notifications.webhook.secret];
  const projectionId = await projectionActive(svc.url, t.key, up.uploadId);
  const ws = await WsCollector.open(svc.url, projectionId, t.key, 0);
  const sse = await SseCollector.open(svc.url, projectionId, t.key, {}, '?afterSequence=0');

  let position = 0;
  for (let i = 0; i < 12; i++) {
    const r = await t.post('/events', {
      aggregateId: `order-${i}`,
      eventType: 'OrderPlaced',
      data: { customerId: `cust-${i % 4}`, lines: [{ sku: 'a', qty: 1, price: 2 }] },
      expectedVersion: 0,
    });
    expect(r.status).toBe(201);
    position = r.body.position;
  }
  const batch = await t.post('/events/batch', {
    aggregateId: 'order-0',
    expectedVersion: 1,
    events: [{ eventType: 'ItemAdded', data: { sku: 'b', qty: 1, price: 3, customerId: 'cust-0' } }],
  });
  expect(batch.status).toBe(201);
  expect((await t.post('/events', { aggregateId: 'order-0', eventType: 'ItemAdded', data: {}, expectedVersion: 0 })).status).toBe(409);
  // Idempotent appends: a keyed append, its replay (the key's look-up, insert and the replay's read).
  const keyedBody = { aggregateId: 'memo-1', eventType: 'Noted', data: {} }; // no projection takes it: the counts below hold
  expect((await t.post('/events', keyedBody, { 'idempotency-key': 'sql-key-1' })).status).toBe(201);
  expect((await t.post('/events', keyedBody, { 'idempotency-key': 'sql-key-1' })).status).toBe(201);
  expect(
    (await other.post('/events', { aggregateId: 'order-0', eventType: 'OrderPlaced', data: { customerId: 'x', lines: [] } })).status,
  ).toBe(201);
  expect((await t.get('/events/order-0?fromVersion=1&limit=10')).body.events).toHaveLength(2);
  // The log read in each of its shapes (no filter, one value, several values, both lists, backward).
  for (const q of ['', '&eventType=OrderPlaced', '&eventType=OrderPlaced,ItemAdded', '&aggregateType=order&eventType=OrderPlaced']) {
    expect((await t.get(`/events?afterPosition=0${q}`)).status).toBe(200);
    expect((await t.get(`/events?direction=backward${q}`)).status).toBe(200);
  }
  expect((await t.get('/events/order-0?direction=backward')).status).toBe(200);
  expect((await t.get('/aggregate-types/order')).status).toBe(200);
  await until(
    () => t.get('/aggregate-types/order/order-1/state'),
    (r) => r.status === 200,
    30_000,
    'aggregate state',
  );

  expect((await t.get(`/projections/${projectionId}/state/cust-1?minPosition=${position}`)).status).toBe(200);
  await until(
    () => t.get(`/projections/${projectionId}/notifications?afterSequence=0`),
    (r) => r.body.notifications?.length === 13,
    30_000,
    'notifications',
  );
  // Some deliveries made is enough for their SQL (all of them is the multi-instance suite's business: issue 23 item 1).
  await until(
    () => receiver.accepted.length,
    (n) => n >= 1,
    30_000,
    'webhooks',
  );
  await until(
    () => ws.messages.length + sse.sequences().length,
    (n) => n >= 26,
    30_000,
    'streams',
  );
  ws.socket.close();
  sse.close();
  // Erasure (README "Erasure"): its one transaction, and the refusals that read the frozen stream after it.
  expect((await request(`${svc.url}/events/order-11`, 'DELETE', undefined, { 'x-api-key': t.key })).status).toBe(200);
  expect((await t.get('/aggregate-types/order/order-11/state')).status).toBe(410);
  expect((await t.post('/events', { aggregateId: 'order-11', eventType: 'X', data: {} })).status).toBe(410);
  for (const p of [
    `/projections/${projectionId}/status?include=lag`,
    `/projections/${projectionId}/lanes`,
    `/projections/${projectionId}/lanes?held=true`,
    `/projections/${projectionId}/keys`,
    `/projections/${projectionId}/webhook`,
    `/projections/${projectionId}/webhook/deliveries?status=delivered`,
    `/projections/${projectionId}/webhook/deliveries?status=dead`,
  ]) {
    expect([p, (await t.get(p)).status]).toEqual([p, 200]);
  }
  expect((await t.post(`/projections/${projectionId}/webhook/deliveries/replay`, {})).status).toBe(200);
  await eventWebhooksWorkload(svc, t);
  expect((await t.post('/webhooks/rotate', {})).status).toBe(200);
  expect((await request(`${svc.url}/admin/lanes`, 'GET', undefined, admin)).status).toBe(200);
  expect((await request(`${svc.url}/metrics`, 'GET')).status).toBe(200);
  expect((await request(`${svc.url}/health/ready`, 'GET')).status).toBe(200);

  // A redeploy: a second version catches up, is promoted, and the first is dropped (its lanes purged).
  const again = await uploadProjection(svc.url, t.key, exampleSources('customer-totals'), { notifications: { sse: true } });
  await projectionPromoted(svc.url, t.key, projectionId, again.uploadId);
  expect(
    (await t.post('/events', { aggregateId: 'order-20', eventType: 'OrderPlaced', data: { customerId: 'cust-9', lines: [] } })).status,
  ).toBe(201);
  await until(
    () => t.get(`/projections/${projectionId}/state/cust-9`),
    (r) => r.status === 200,
    30_000,
    'state after promotion',
  );
  // And a delete: everything of the projection goes.
  expect((await t.get(`/projections/${projectionId}/status`)).status).toBe(200);
  expect((await clientFor(svc.url, t.key).get(`/projections/${projectionId}/notifications?afterSequence=0`)).status).toBe(200);
  const del = await fetch(`${svc.url}/projections/${projectionId}`, { method: 'DELETE', headers: { 'x-api-key': t.key } });
  expect(del.status).toBe(204);
  await until(
    () => request(`${svc.url}/admin/lanes`, 'GET', undefined, admin),
    (r) => JSON.stringify(r.body).length > 0,
    10_000,
    'admin lanes',
  );
  // A tenant exported, removed (every table, in chunks) and imported again (issue 24 item 6).
  const exported = await fetch(`${svc.url}/admin/tenants/${t.tenantId}/export`, { headers: admin });
  expect(exported.status).toBe(200);
  const file = await exported.text();
  expect((await fetch(`${svc.url}/admin/tenants/${t.tenantId}`, { method: 'DELETE', headers: admin })).status).toBe(204);
  const imported = await request(`${svc.url}/admin/tenants/import`, 'POST', file, { ...admin, 'content-type': 'application/x-ndjson' });
  expect(imported.status).toBe(201);
}

/** Event webhooks (src/event-webhooks): every route, a delivery, a dead letter, a replay, a delete. */
async function eventWebhooksWorkload(svc: ServiceProcess, t: ReturnType<typeof clientFor>): Promise<void> {
  const rx = await new WebhookReceiver().start();
  try {
    const made = await t.post('/event-webhooks', { url: rx.url, afterPosition: 0, aggregateTypes: ['order'], eventTypes: ['OrderPlaced'] });
    expect(made.status).toBe(201);
    rx.secrets = [made.body.secret];
    const id = made.body.webhookId;
    const all = await t.post('/event-webhooks', { url: rx.url });
    expect(all.status).toBe(201);
    rx.failFirst.set(1, 99); // position 1 never accepted: dead after the retry schedule
    await until(
      () => rx.sequences().length,
      (n) => n >= 3,
      30_000,
      'event webhook deliveries',
    );
    for (const p of ['/event-webhooks', `/event-webhooks/${id}`, `/event-webhooks/${id}/deliveries?status=dead`]) {
      expect([p, (await t.get(p)).status]).toEqual([p, 200]);
    }
    expect((await t.post(`/event-webhooks/${id}/replay`, { fromPosition: 2 })).status).toBe(200);
    expect((await t.post(`/event-webhooks/${id}/resume`, {})).status).toBe(409);
    const gone = await fetch(`${svc.url}/event-webhooks/${all.body.webhookId}`, { method: 'DELETE', headers: { 'x-api-key': t.key } });
    expect(gone.status).toBe(204);
  } finally {
    await rx.stop();
  }
}

const findingsByBackend = new Map<StoreBackend, string[]>();

describe.each(STORE_BACKENDS)('SQL the service runs on %s', (backend) => {
  it('constrains tenant_id in every statement on tenant data, but for the listed sweeps', async () => {
    if (!fs.existsSync(preload)) throw new Error(`${preload} missing: run 'npm run build' (npm test does)`);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-sql-'));
    const capture = path.join(dir, 'statements.jsonl');
    const receiver = await new WebhookReceiver().start();
    const svc = new ServiceProcess({
      ...(await envFor(backend)),
      DATA_DIR: dir,
      SQL_CAPTURE_FILE: capture,
      NODE_OPTIONS: `--require ${preload}`,
      // Every background sweep runs several times within the workload.
      LANE_SWEEP_MS: '100',
      WEBHOOK_POLL_MS: '100',
      // Ran only when the workload outlasted its 10 s default (a slow machine): every run now.
      WEBHOOK_REPAIR_MS: '100',
      NOTIFICATIONS_RETENTION_SWEEP_MS: '100',
      IDEMPOTENCY_KEYS_SWEEP_MS: '100',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      // Event webhooks: a dead letter within the workload.
      WEBHOOK_RETRY_BACKOFF_MS: '20,20',
    });
    await svc.start();
    try {
      await workload(svc, receiver);
    } finally {
      await svc.kill('SIGTERM');
      await receiver.stop();
    }
    const texts = [
      ...new Set(
        fs
          .readFileSync(capture, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as string),
      ),
    ];
    fs.rmSync(dir, { recursive: true, force: true });
    // The append path runs in a worker thread on SQLite: its statements must be here too.
    expect(texts.some((s) => /insert into events/i.test(s))).toBe(true);
    const tenantTables = tenantTablesFrom(texts);
    expect([...tenantTables]).toEqual(
      expect.arrayContaining(['events', 'streams', 'lanes', 'lane_inbox', 'webhook_deliveries', 'notifications']),
    );

    const unexplained: string[] = [];
    let checked = 0;
    for (const text of texts) {
      const sql = normalizeSql(text);
      // Transactions; migrations (DDL and backfills, once). A function's body runs later, inside a statement checked
      // here: es_condition_raced (condition-recheck-schema.ts) reads each tenant's rows by the tenant its caller
      // passes (`c.t`), and condition-recheck.int-spec.ts shows another tenant's events never count.
      if (CONTROL.test(sql) || /\b(create|alter|drop)\s+(table|index|unique|function)/i.test(sql)) continue;
      checked++;
      const unscoped = unscopedTenantTables(sql, tenantTables);
      if (!unscoped.length) continue;
      const allowed = ALLOWED.find((a) => a.match.test(sql));
      if (allowed) usedAllowances.add(allowed.name);
      else unexplained.push(`${unscoped.map((u) => u.table).join(', ')} ← ${sql}`);
    }
    findingsByBackend.set(backend, unexplained);
    process.stdout.write(`${backend}: ${checked} distinct statements checked, ${unexplained.length} unexplained\n`);
    expect(checked).toBeGreaterThan(50);
    expect(unexplained).toEqual([]);
  });
});

it('lists no allowance that no statement needed', () => {
  expect(findingsByBackend.size).toBe(STORE_BACKENDS.length);
  expect(ALLOWED.map((a) => a.name).filter((n) => !usedAllowances.has(n))).toEqual([]);
});
