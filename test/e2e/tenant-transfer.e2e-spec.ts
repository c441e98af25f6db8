import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PostgresStore } from '../../src/store/postgres/postgres-store';
import { ADMIN_TOKEN, Client, newTenant, request, RunningService, startService } from '../support/service-harness';
import { envFor, postgresServer, stopBackends } from '../support/store-backends';
import { WsCollector } from '../support/stream-clients';
import { zipSources } from '../support/zip-writer';
import { deployReducer, exampleSources, projectionActive, until, uploadProjection } from '../support/tenant-code';

/**
 * Issue 24 item 6: a tenant exported from a SQLite service and imported into a PostgreSQL one
 * (over HTTP, and with the admin CLI and no service) has the same events byte for byte, the same
 * positions, the same reducer and projection states once the catch-up ran; an import is all or
 * nothing; a removal leaves no row in any table with a tenant_id column, even what a second instance
 * wrote through its cached key after the removal (the follow-up pass).
 */
jest.setTimeout(300_000);
afterAll(() => stopBackends(), 60_000);

const FAST = { LANE_SWEEP_MS: '200', PROJECTION_READ_WAIT_MS: '5000' };
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const cli = path.join(__dirname, '..', '..', 'dist', 'src', 'admin-cli.js');
const runCli = (env: Record<string, string>, ...args: string[]) =>
  execFileSync(process.execPath, [cli, ...args], { env: { ...process.env, LOG_LEVEL: 'error', ...env }, encoding: 'utf8' });

const ORDERS = 30;
const IMPORT_MAX = 8 * 1024 * 1024;
const KEY_CACHE_MS = 3_000;

/** An export file written by hand: `events` events of about `dataBytes` each (no keys, no code). */
function bigExport(tenantId: string, events: number, dataBytes: number): string {
  const rows = [
    { table: 'tenants', row: { tenant_id: tenantId, name: 'big', created_at: Date.now() } },
    { table: 'tenant_heads', row: { tenant_id: tenantId, position: events } },
    { table: 'streams', row: { tenant_id: tenantId, aggregate_id: 'big-1', aggregate_type: 'big', version: events } },
    ...Array.from({ length: events }, (_, i) => ({
      table: 'events',
      row: {
        tenant_id: tenantId,
        position: i + 1,
        aggregate_id: 'big-1',
        version: i + 1,
        event_id: crypto.randomUUID(),
        aggregate_type: 'big',
        event_type: 'Big',
        data: JSON.stringify({ pad: 'x'.repeat(dataBytes) }),
        metadata: null,
        correlation_id: null,
        causation_id: null,
        created_at: Date.now(),
      },
    })),
  ];
  const header = {
    format: 'eventstore-export',
    version: 1,
    tenantId,
    exportedAt: new Date().toISOString(),
    schemaVersion: 1,
    store: 'sqlite',
  };
  const trailer = { end: true, rows: rows.length, counts: { tenants: 1, tenant_heads: 1, streams: 1, events } };
  return [header, ...rows, trailer].map((l) => JSON.stringify(l)).join('\n') + '\n';
}
const CUSTOMERS = 4;
const orderIds = Array.from({ length: ORDERS }, (_, i) => `order-${i}`);
const customers = Array.from({ length: CUSTOMERS }, (_, i) => `cust-${i}`);

async function raw(url: string, key: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(30_000) });
  return { status: res.status, text: await res.text() };
}

async function exportOf(svc: RunningService, tenantId: string): Promise<string> {
  const res = await fetch(`${svc.url}/admin/tenants/${tenantId}/export`, { headers: ADMIN });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/application\/x-ndjson/);
  return res.text();
}

const importInto = (svc: RunningService, body: string) =>
  request(`${svc.url}/admin/tenants/import`, 'POST', body, { ...ADMIN, 'content-type': 'application/x-ndjson' });

/** Every table of the PostgreSQL schema with a tenant_id column, and this tenant's rows in each (all of them, derived ones too). */
async function rowsPerTable(databaseUrl: string, tenantId: string): Promise<Record<string, number>> {
  const store = new PostgresStore({ connectionString: databaseUrl, poolSize: 2 });
  try {
    const { rows: tables } = await store.pool.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'tenant_id'",
    );
    const out: Record<string, number> = {};
    for (const { table_name } of tables)
      out[table_name] = Number(
        (await store.pool.query(`SELECT COUNT(*) AS n FROM ${table_name} WHERE tenant_id = $1`, [tenantId])).rows[0].n,
      );
    return out;
  } finally {
    await store.close();
  }
}

/** What must be equal on both sides: each stream's GET body (text), the reducer states, the projection states at the head. */
async function observed(svc: RunningService, key: string, projectionId: string, head: number) {
  const streams: Record<string, string> = {};
  const states: Record<string, unknown> = {};
  for (const id of orderIds) {
    const events = await raw(`${svc.url}/events/${id}`, key);
    expect(events.status).toBe(200);
    streams[id] = events.text;
    const s = await raw(`${svc.url}/aggregate-types/order/${id}/state`, key);
    expect(s.status).toBe(200);
    const body = JSON.parse(s.text);
    states[id] = { state: body.state, version: body.version };
  }
  const totals: Record<string, unknown> = {};
  for (const c of customers) {
    const r = await until(
      () => raw(`${svc.url}/projections/${projectionId}/state/${c}?minPosition=${head}`, key),
      (v) => v.status === 200,
      120_000,
      `projection state ${c} at ${head}`,
    );
    totals[c] = JSON.parse(r.text).state;
  }
  return { streams, states, totals };
}

describe('tenant export, import and removal: SQLite → PostgreSQL', () => {
  let src: RunningService & { config: { dataDir: string } };
  let dst: RunningService;
  let dstUrl: string;
  let t: Client;
  let projectionId: string;
  let head: number;
  let before: Awaited<ReturnType<typeof observed>>;
  let exported: string;

  beforeAll(async () => {
    src = await startService({ ...FAST });
    dstUrl = (await envFor('postgres')).DATABASE_URL;
    dst = await startService({
      DATABASE_URL: dstUrl,
      TENANT_IMPORT_MAX_BYTES: String(IMPORT_MAX),
      API_KEY_CACHE_MS: String(KEY_CACHE_MS),
      ...FAST,
    });
    t = await newTenant(src.url, 'movable');
    await deployReducer(src.url, t.key, 'orders', exampleSources('orders'));
    const up = await uploadProjection(src.url, t.key, exampleSources('customer-totals'), {
      notifications: { webhook: { url: 'https://example.com/hook' } },
    });
    projectionId = await projectionActive(src.url, t.key, up.uploadId);
    for (let i = 0; i < ORDERS; i++) {
      // Odd spacing and a number past double precision: the stored text is what must travel.
      const body = `{"aggregateId":"${orderIds[i]}","eventType":"OrderPlaced","data":{"customerId":"${customers[i % CUSTOMERS]}",  "lines":[{"sku":"s","qty":1,"price":${(i % 5) + 1}.10}],"n":12345678901234567890123},"metadata":{"é":"ü-日本","big":1e400}}`;
      const r = await t.post('/events', body, { 'content-type': 'application/json' });
      expect(r.status).toBe(201);
    }
    head = ORDERS;
    before = await observed(src, t.key, projectionId, head);
    exported = await exportOf(src, t.tenantId);
  }, 240_000);
  afterAll(async () => {
    await src?.close();
    await dst?.close();
  });

  it('writes a header, every row and a trailer that counts them', () => {
    const lines = exported
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ format: 'eventstore-export', version: 1, tenantId: t.tenantId, store: 'sqlite' });
    expect(lines.at(-1)).toMatchObject({ end: true, rows: lines.length - 2 });
    const counts = lines.at(-1).counts;
    expect(counts).toMatchObject({ tenants: 1, api_keys: 1, events: ORDERS, streams: ORDERS, bindings: 1, projections: 1 });
    // Derived state stays behind; secrets too.
    for (const derived of ['snapshots', 'lanes', 'lane_inbox', 'notifications', 'webhook_deliveries', 'webhook_secrets'])
      expect(counts[derived]).toBeUndefined();
    const event = lines.find((l) => l.table === 'events').row;
    expect(typeof event.data).toBe('string');
    expect(event.data).toContain('12345678901234567890123');
  });

  it('imports into PostgreSQL: the same events byte for byte, the same states once caught up', async () => {
    const res = await importInto(dst, exported);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      tenantId: t.tenantId,
      counts: { events: ORDERS },
      suspendedWebhooks: [projectionId],
      webhookSecrets: 'regenerated',
    });
    // The same key works there: its hash travelled.
    expect((await request(`${dst.url}/auth/whoami`, 'GET', undefined, { 'x-api-key': t.key })).body).toMatchObject({
      tenantId: t.tenantId,
    });
    const after = await observed(dst, t.key, projectionId, head);
    expect(after.streams).toEqual(before.streams);
    expect(after.states).toEqual(before.states);
    expect(after.totals).toEqual(before.totals);
    // The next append continues at the exported head and versions.
    const next = await request(
      `${dst.url}/events`,
      'POST',
      { aggregateId: orderIds[0], eventType: 'OrderShipped', data: { trackingNumber: 'T' } },
      { 'x-api-key': t.key },
    );
    expect(next.status).toBe(201);
    expect(next.body).toMatchObject({ position: head + 1, version: 2 });
  });

  it('refuses an import of a tenant the store already has (409 TENANT_EXISTS), storing nothing more', async () => {
    const res = await importInto(dst, exported);
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('TENANT_EXISTS');
    expect((await rowsPerTable(dstUrl, t.tenantId)).events).toBe(ORDERS + 1);
  });

  it('refuses a truncated file (400 IMPORT_TRUNCATED) and a tampered one (400 IMPORT_INVALID) with nothing stored', async () => {
    const other = await newTenant(src.url, 'cut-short');
    for (let i = 0; i < 5; i++)
      expect((await other.post('/events', { aggregateId: `a-${i}`, eventType: 'E', data: { i } })).status).toBe(201);
    const lines = (await exportOf(src, other.tenantId)).trimEnd().split('\n');
    const cut = [lines.slice(0, -1).join('\n') + '\n', [...lines.slice(0, 3), ...lines.slice(4)].join('\n') + '\n'];
    for (const body of cut) {
      const res = await importInto(dst, body);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('IMPORT_TRUNCATED');
    }
    const alien = lines.map((l, i) => (i === 3 ? l.replace(other.tenantId, t.tenantId) : l)).join('\n') + '\n';
    expect((await importInto(dst, alien)).body.error).toBe('IMPORT_INVALID');
    expect((await importInto(dst, 'not json\n')).body.error).toBe('IMPORT_INVALID');
    const rows = await rowsPerTable(dstUrl, other.tenantId);
    expect(Object.values(rows).every((n) => n === 0)).toBe(true);
    expect((await request(`${dst.url}/auth/whoami`, 'GET', undefined, { 'x-api-key': other.key })).status).toBe(401);
  });

  it('streams an import body past the 4 MiB JSON limit, and refuses one past TENANT_IMPORT_MAX_BYTES with 413', async () => {
    const tenantId = crypto.randomUUID();
    const big = bigExport(tenantId, 30, 200_000);
    expect(big.length).toBeGreaterThan(5 * 1024 * 1024);
    const res = await importInto(dst, big);
    expect(res.status).toBe(201);
    expect((await rowsPerTable(dstUrl, tenantId)).events).toBe(30);
    const tooBig = crypto.randomUUID();
    const over = await importInto(dst, bigExport(tooBig, 45, 200_000));
    expect(over.status).toBe(413);
    expect(over.body.error).toBe('PAYLOAD_TOO_LARGE');
    // Sent chunked, without a Content-Length: counted as it streams in.
    const text = bigExport(tooBig, 45, 200_000);
    const chunked = await fetch(`${dst.url}/admin/tenants/import`, {
      method: 'POST',
      headers: { ...ADMIN, 'content-type': 'application/x-ndjson' },
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < text.length; i += 1 << 20) controller.enqueue(new TextEncoder().encode(text.slice(i, i + (1 << 20))));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(((await chunked.json()) as { error: string }).error).toBe('PAYLOAD_TOO_LARGE');
    expect(Object.values(await rowsPerTable(dstUrl, tooBig)).every((n) => n === 0)).toBe(true);
  });

  it('removes a tenant: every table with a tenant_id column holds none of its rows, its key is refused at once', async () => {
    const rowsBefore = await rowsPerTable(dstUrl, t.tenantId);
    // The catch-up made derived rows too: the removal must reach them.
    expect(rowsBefore.lanes).toBeGreaterThan(0);
    expect(rowsBefore.snapshots).toBeGreaterThan(0);
    // A second instance on the same store, with the tenant's key in its cache.
    const peer = await startService({ DATABASE_URL: dstUrl, API_KEY_CACHE_MS: String(KEY_CACHE_MS), ...FAST });
    try {
      const stream = await WsCollector.open(dst.url, projectionId, t.key, 0);
      expect((await request(`${peer.url}/auth/whoami`, 'GET', undefined, { 'x-api-key': t.key })).status).toBe(200);
      const removedAt = Date.now();
      const res = await fetch(`${dst.url}/admin/tenants/${t.tenantId}`, { method: 'DELETE', headers: ADMIN });
      expect(res.status).toBe(204);
      // Refused at once on the instance that removed it.
      expect((await request(`${dst.url}/auth/whoami`, 'GET', undefined, { 'x-api-key': t.key })).status).toBe(401);
      // A late write through the peer's cached key (an upload: its row, then a compile that fails).
      const form = new FormData();
      form.append('file', new Blob([zipSources([{ path: 'Late.cs', content: 'class Late {' }])]), 'late.zip');
      form.append('reducerId', 'late');
      const late = await fetch(`${peer.url}/reducers/upload`, { method: 'POST', headers: { 'x-api-key': t.key }, body: form });
      expect(late.status).toBe(202);
      expect((await rowsPerTable(dstUrl, t.tenantId)).uploads).toBe(1);
      // The peer refuses the key once its cache entry lapses.
      await until(
        async () => (await request(`${peer.url}/auth/whoami`, 'GET', undefined, { 'x-api-key': t.key })).status,
        (st) => st === 401,
        KEY_CACHE_MS + 5_000,
        'peer refuses the key',
      );
      expect(Date.now() - removedAt).toBeLessThan(KEY_CACHE_MS + 5_000);
      // The removing instance's follow-up pass (API_KEY_CACHE_MS + 1 s later) takes what was written late.
      await until(
        () => rowsPerTable(dstUrl, t.tenantId),
        (rows) => Object.values(rows).every((n) => n === 0),
        KEY_CACHE_MS + 10_000,
        'no row of the removed tenant',
      );
      await checkRemoved(stream, rowsBefore);
    } finally {
      await peer.close();
    }
  });

  async function checkRemoved(stream: WsCollector, rowsBefore: Record<string, number>) {
    // Its open streams are closed (1001, 'tenant removed').
    await until(
      () => stream.closeCode,
      (c) => c !== null,
      10_000,
      'stream closed',
    );
    expect(stream).toMatchObject({ closeCode: 1001, closeReason: 'tenant removed' });
    expect((await request(`${dst.url}/auth/whoami`, 'GET', undefined, { 'x-api-key': t.key })).status).toBe(401);
    const rowsAfter = await rowsPerTable(dstUrl, t.tenantId);
    expect(Object.keys(rowsAfter).length).toBeGreaterThanOrEqual(Object.keys(rowsBefore).length);
    expect(Object.entries(rowsAfter).filter(([, n]) => n > 0)).toEqual([]);
    expect((await fetch(`${dst.url}/admin/tenants/${t.tenantId}`, { method: 'DELETE', headers: ADMIN })).status).toBe(404);
    expect((await fetch(`${dst.url}/admin/tenants/${t.tenantId}/export`, { headers: ADMIN })).status).toBe(404);
  }

  it('imports a removed tenant again into the same running instance, which catches its projection up again', async () => {
    const res = await importInto(dst, exported);
    expect(res.status).toBe(201);
    const again = await observed(dst, t.key, projectionId, head);
    expect(again).toEqual(before);
    expect((await fetch(`${dst.url}/admin/tenants/${t.tenantId}`, { method: 'DELETE', headers: ADMIN })).status).toBe(204);
  });

  it('moves the tenant with the admin CLI and no service: export from SQLite, import into PostgreSQL', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-transfer-'));
    const file = path.join(dir, 'tenant.ndjson');
    try {
      runCli({ DATA_DIR: src.config.dataDir }, 'export', t.tenantId, '--out', file);
      const text = fs.readFileSync(file, 'utf8');
      expect(text.split('\n')[0]).toContain('"eventstore-export"');
      const fresh = await (await postgresServer()).createDatabase('cli');
      const out = JSON.parse(runCli({ DATABASE_URL: fresh }, 'import', file));
      expect(out).toMatchObject({ tenantId: t.tenantId, counts: { events: ORDERS } });
      expect(() => runCli({ DATABASE_URL: fresh }, 'import', file)).toThrow(/already holds/);
      const moved = await startService({ DATABASE_URL: fresh, ...FAST });
      try {
        const after = await observed(moved, t.key, projectionId, head);
        expect(after).toEqual(before);
      } finally {
        await moved.close();
      }
      runCli({ DATABASE_URL: fresh }, 'delete-tenant', t.tenantId);
      expect(Object.entries(await rowsPerTable(fresh, t.tenantId)).filter(([, n]) => n > 0)).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
