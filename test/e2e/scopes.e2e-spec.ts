import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { Client as PgClient } from 'pg';
import { apiKeyScopesMigration } from '../../src/store/api-key-schema';
import { migrations } from '../../src/store/migrations';
import { hashApiKey } from '../../src/tenancy/api-key';
import { API_SCOPES, ApiScope } from '../../src/tenancy/scopes';
import { ADMIN_TOKEN, clientFor, Client, newTenant, request, RunningService, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { SseCollector, WsCollector } from '../support/stream-clients';
import { exampleSources, projectionActive, until, uploadProjection } from '../support/tenant-code';
import { KEY_WATCH_MS } from '../../src/tenancy/tenant-directory';

const SQLITE_MIGRATIONS = migrations('sqlite');
const POSTGRES_MIGRATIONS = migrations('postgres');

/**
 * Scoped API keys over real HTTP, WebSocket and SSE on both stores. The route matrix is read from
 * the service's own OpenAPI document (whose security names each route's scope, from the same
 * @RequiresScope the hooks enforce), so a route added later is covered without editing this file.
 */
jest.setTimeout(300_000);
afterAll(() => stopBackends(), 60_000);

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

interface Operation {
  method: string;
  path: string;
  scope: ApiScope | null;
}

/** Every API-key operation of the document, with the scope its security names (null: any valid key). */
function keyOperations(doc: any): Operation[] {
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(methods)) {
      const apiKey = (op.security as Record<string, string[]>[]).find((s) => 'ApiKey' in s);
      if (!apiKey) continue;
      ops.push({ method: method.toUpperCase(), path, scope: (apiKey.ApiKey[0] as ApiScope | undefined) ?? null });
    }
  }
  return ops;
}

/** A request that reaches the route: parameters filled with a name nothing has, a JSON body on writes. */
function call(url: string, op: Operation, key: string) {
  const target = url + op.path.replace(/\{[^}]+\}/g, 'no-such-thing');
  return request(target, op.method, op.method === 'GET' || op.method === 'DELETE' ? undefined : {}, { 'x-api-key': key });
}

async function issueKey(url: string, tenantId: string, body: unknown): Promise<{ keyId: string; apiKey: string }> {
  const res = await request(`${url}/admin/tenants/${tenantId}/keys`, 'POST', body, admin);
  if (res.status !== 201) throw new Error(`issue failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

describe.each(STORE_BACKENDS)('scoped API keys on %s', (backend) => {
  let svc: RunningService;
  let tenant: Client;
  let ops: Operation[];
  const only = new Map<ApiScope, string>();
  const allBut = new Map<ApiScope, string>();

  beforeAll(async () => {
    svc = await startService(await envFor(backend));
    tenant = await newTenant(svc.url, 'scoped');
    for (const s of API_SCOPES) {
      only.set(s, (await issueKey(svc.url, tenant.tenantId, { scopes: [s], name: `only ${s}` })).apiKey);
      const rest = API_SCOPES.filter((x) => x !== s);
      allBut.set(s, (await issueKey(svc.url, tenant.tenantId, { scopes: rest, name: `all but ${s}` })).apiKey);
    }
    ops = keyOperations((await request(`${svc.url}/openapi.json`, 'GET')).body);
  }, 180_000);
  afterAll(() => svc?.close());

  it('the document names a scope for every API-key route but whoami, and every scope guards a route', () => {
    expect(ops.filter((o) => o.scope === null).map((o) => `${o.method} ${o.path}`)).toEqual(['GET /auth/whoami']);
    expect(ops.length).toBeGreaterThanOrEqual(28);
    for (const s of API_SCOPES.filter((x) => x !== 'events:erase')) expect(ops.some((o) => o.scope === s)).toBe(true);
  });

  it('refuses every guarded route to a key holding every scope but its own: 403 FORBIDDEN {missingScope}', async () => {
    const wrong: string[] = [];
    for (const op of ops.filter((o) => o.scope)) {
      const res = await call(svc.url, op, allBut.get(op.scope!)!);
      if (res.status !== 403 || res.body?.error !== 'FORBIDDEN' || res.body?.missingScope !== op.scope)
        wrong.push(`${op.method} ${op.path}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('lets a key holding only the route scope through the scope check (whatever the route then answers)', async () => {
    const wrong: string[] = [];
    for (const op of ops.filter((o) => o.scope)) {
      const res = await call(svc.url, op, only.get(op.scope!)!);
      if (res.status === 401 || res.body?.error === 'FORBIDDEN')
        wrong.push(`${op.method} ${op.path}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('a key with no scopes at all may call only whoami', async () => {
    const none = await issueKey(svc.url, tenant.tenantId, { scopes: [], name: 'none' });
    const who = await clientFor(svc.url, none.apiKey).get('/auth/whoami');
    expect(who).toMatchObject({ status: 200, body: { tenantId: tenant.tenantId, keyId: none.keyId, scopes: [] } });
    const read = await clientFor(svc.url, none.apiKey).get('/events/a-1');
    expect(read).toMatchObject({ status: 403, body: { error: 'FORBIDDEN', missingScope: 'events:read' } });
  });

  it('a route answers with real work to a key with just its scope', async () => {
    const writer = clientFor(svc.url, only.get('events:write')!);
    const reader = clientFor(svc.url, only.get('events:read')!);
    expect((await writer.post('/events', { aggregateId: 'acct-1', eventType: 'Opened', data: { n: 1 } })).status).toBe(201);
    expect((await writer.get('/events/acct-1')).body).toMatchObject({ error: 'FORBIDDEN', missingScope: 'events:read' });
    expect((await reader.get('/events/acct-1')).body.events).toHaveLength(1);
    expect((await reader.post('/events', { aggregateId: 'acct-1', eventType: 'X', data: {} })).body).toMatchObject({
      missingScope: 'events:write',
    });
  });

  it('refuses a refused request before reading its body (the connection is closed)', async () => {
    const res = await fetch(`${svc.url}/events`, {
      method: 'POST',
      headers: { 'x-api-key': only.get('events:read')!, 'content-type': 'application/json' },
      body: JSON.stringify({ aggregateId: 'acct-2', eventType: 'E', data: {} }),
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('connection')).toBe('close');
    expect(((await tenant.get('/events/acct-2')).body as any).events).toEqual([]);
  });

  it('refuses WebSocket and SSE stream upgrades without state:read (403 missingScope), and passes them with it', async () => {
    const ws = await WsCollector.open(svc.url, 'no-such-projection', allBut.get('state:read')!).catch((e) => e);
    expect(ws.status).toBe(403);
    const sse = await SseCollector.open(svc.url, 'no-such-projection', allBut.get('state:read')!).catch((e) => e);
    expect(sse).toMatchObject({ status: 403, body: { error: 'FORBIDDEN', missingScope: 'state:read' } });
    // With the scope the upgrade gets past the check to the projection lookup.
    const wsOk = await WsCollector.open(svc.url, 'no-such-projection', only.get('state:read')!).catch((e) => e);
    expect(wsOk.status).toBe(404);
    const sseOk = await SseCollector.open(svc.url, 'no-such-projection', only.get('state:read')!).catch((e) => e);
    expect(sseOk).toMatchObject({ status: 404, body: { error: 'NOT_FOUND' } });
  });

  it('the WebSocket refusal carries the error body', async () => {
    const body = await new Promise<any>((resolve, reject) => {
      const req = http.get(`${svc.url}/projections/p/stream`, {
        headers: {
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-version': '13',
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
          'x-api-key': allBut.get('state:read')!,
        },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode, ...JSON.parse(text) }));
      });
      req.on('upgrade', () => reject(new Error('upgraded')));
      req.on('error', reject);
    });
    expect(body).toMatchObject({ status: 403, error: 'FORBIDDEN', missingScope: 'state:read' });
  });

  it('keys made without scopes (a tenant first key, the admin API without scopes) hold every scope', async () => {
    const who = await tenant.get('/auth/whoami');
    expect(who.body).toMatchObject({ tenantId: tenant.tenantId, keyId: expect.stringMatching(/^key_/), scopes: [...API_SCOPES] });
    const plain = await issueKey(svc.url, tenant.tenantId, undefined);
    expect((await clientFor(svc.url, plain.apiKey).get('/auth/whoami')).body.scopes).toEqual([...API_SCOPES]);
    const listed = (await tenant.get('/auth/keys')).body.keys;
    expect(listed.find((k: any) => k.keyId === plain.keyId)).toMatchObject({ allScopes: true, scopes: [...API_SCOPES], name: null });
  });

  describe('/auth/keys', () => {
    it('makes, lists and revokes keys; the secret is shown once and never listed', async () => {
      const manager = clientFor(svc.url, (await issueKey(svc.url, tenant.tenantId, { scopes: ['keys:manage', 'events:read'] })).apiKey);
      const made = await manager.post('/auth/keys', { scopes: ['events:read'], name: 'dashboard' });
      expect(made).toMatchObject({
        status: 201,
        body: {
          keyId: expect.stringMatching(/^key_/),
          apiKey: expect.stringMatching(/^esk_/),
          name: 'dashboard',
          scopes: ['events:read'],
          allScopes: false,
          expiresAt: null,
        },
      });
      const dashboard = clientFor(svc.url, made.body.apiKey);
      expect((await dashboard.get('/auth/whoami')).body).toMatchObject({ keyId: made.body.keyId, scopes: ['events:read'] });
      const list = await manager.get('/auth/keys');
      expect(list.status).toBe(200);
      expect(list.body.keys.find((k: any) => k.keyId === made.body.keyId)).toEqual({
        keyId: made.body.keyId,
        name: 'dashboard',
        scopes: ['events:read'],
        allScopes: false,
        createdAt: expect.any(String),
        expiresAt: null,
      });
      expect(JSON.stringify(list.body)).not.toMatch(/esk_/);
      const del = await request(`${svc.url}/auth/keys/${made.body.keyId}`, 'DELETE', undefined, { 'x-api-key': manager.key });
      expect(del.status).toBe(204);
      expect((await dashboard.get('/auth/whoami')).status).toBe(401);
      expect((await manager.get('/auth/keys')).body.keys.map((k: any) => k.keyId)).not.toContain(made.body.keyId);
      const again = await request(`${svc.url}/auth/keys/${made.body.keyId}`, 'DELETE', undefined, { 'x-api-key': manager.key });
      expect(again).toMatchObject({ status: 404, body: { error: 'NOT_FOUND' } });
    });

    it('never gives more than the maker holds: scopes (403 missingScope) or a later expiry', async () => {
      const manager = clientFor(svc.url, (await issueKey(svc.url, tenant.tenantId, { scopes: ['keys:manage', 'events:read'] })).apiKey);
      const up = await manager.post('/auth/keys', { scopes: ['events:read', 'deploy'], name: 'sneaky' });
      expect(up).toMatchObject({ status: 403, body: { error: 'FORBIDDEN', missingScope: 'deploy' } });
      const all = await manager.post('/auth/keys', { scopes: [...API_SCOPES], name: 'sneaky' });
      expect(all.status).toBe(403);
      const same = await manager.post('/auth/keys', { scopes: ['keys:manage', 'events:read'], name: 'peer' });
      expect(same.status).toBe(201);
      const soon = new Date(Date.now() + 3_600_000).toISOString();
      const temporary = clientFor(svc.url, (await issueKey(svc.url, tenant.tenantId, { scopes: ['keys:manage'], expiresAt: soon })).apiKey);
      const forever = await temporary.post('/auth/keys', { scopes: [], name: 'forever' });
      expect(forever).toMatchObject({ status: 400, body: { error: 'VALIDATION_FAILED', field: 'expiresAt' } });
      const later = await temporary.post('/auth/keys', {
        scopes: [],
        name: 'later',
        expiresAt: new Date(Date.now() + 7_200_000).toISOString(),
      });
      expect(later.status).toBe(400);
      expect((await temporary.post('/auth/keys', { scopes: [], name: 'ok', expiresAt: soon })).status).toBe(201);
    });

    it('refuses bad bodies with 400 and a field', async () => {
      const cases: [unknown, string][] = [
        [{ name: 'x' }, 'scopes'],
        [{ scopes: ['events:read'] }, 'name'],
        [{ scopes: ['events:all'], name: 'x' }, 'scopes'],
        [{ scopes: 'events:read', name: 'x' }, 'scopes'],
        [{ scopes: [], name: '' }, 'name'],
        [{ scopes: [], name: 'x', expiresAt: '2001-01-01T00:00:00Z' }, 'expiresAt'],
        [{ scopes: [], name: 'x', expiresAt: 'tomorrow' }, 'expiresAt'],
        [{ scopes: [], name: 'x', admin: true }, 'admin'],
      ];
      for (const [body, field] of cases) {
        const res = await tenant.post('/auth/keys', body);
        expect([res.status, res.body.error, res.body.field]).toEqual([400, 'VALIDATION_FAILED', field]);
      }
    });

    it('an expired key is refused with 401 once its time has come', async () => {
      const expiresAt = new Date(Date.now() + 1_500).toISOString();
      const made = await tenant.post('/auth/keys', { scopes: ['events:read'], name: 'short', expiresAt });
      expect(made.status).toBe(201);
      const short = clientFor(svc.url, made.body.apiKey);
      expect((await short.get('/auth/whoami')).status).toBe(200);
      const refused = await until(
        () => short.get('/auth/whoami'),
        (r) => r.status !== 200,
        10_000,
        'the key to expire',
      );
      expect(refused).toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED', message: expect.stringContaining('expired') } });
      expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expiresAt));
    });

    it("a tenant's key cannot see or revoke another tenant's keys", async () => {
      const other = await newTenant(svc.url, 'other');
      const otherWho = (await other.get('/auth/whoami')).body;
      const res = await request(`${svc.url}/auth/keys/${otherWho.keyId}`, 'DELETE', undefined, { 'x-api-key': tenant.key });
      expect(res).toMatchObject({ status: 404, body: { error: 'NOT_FOUND' } });
      expect((await other.get('/auth/whoami')).status).toBe(200);
      expect((await tenant.get('/auth/keys')).body.keys.map((k: any) => k.keyId)).not.toContain(otherWho.keyId);
      expect((await other.get('/auth/keys')).body.keys.map((k: any) => k.keyId)).toEqual([otherWho.keyId]);
    });

    it('a key may revoke itself', async () => {
      const self = await tenant.post('/auth/keys', { scopes: ['keys:manage'], name: 'self' });
      const res = await request(`${svc.url}/auth/keys/${self.body.keyId}`, 'DELETE', undefined, { 'x-api-key': self.body.apiKey });
      expect(res.status).toBe(204);
      expect((await clientFor(svc.url, self.body.apiKey).get('/auth/whoami')).status).toBe(401);
    });
  });
});

describe('revocation across two instances on one PostgreSQL', () => {
  let a: RunningService;
  let b: RunningService;

  beforeAll(async () => {
    const env = await envFor('postgres');
    a = await startService(env);
    b = await startService(env);
  }, 180_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it('a key revoked on one instance is refused by the other on its next request', async () => {
    const tenant = await newTenant(a.url, 'two-instances');
    const made = await tenant.post('/auth/keys', { scopes: ['events:read'], name: 'victim' });
    const onB = clientFor(b.url, made.body.apiKey);
    // Used on B first, so that B has resolved it once (what a cache would keep).
    expect((await onB.get('/auth/whoami')).status).toBe(200);
    expect((await onB.get('/events/x')).status).toBe(200);
    const del = await request(`${a.url}/auth/keys/${made.body.keyId}`, 'DELETE', undefined, { 'x-api-key': tenant.key });
    expect(del.status).toBe(204);
    expect((await onB.get('/events/x')).status).toBe(401);
    expect((await onB.get('/auth/whoami')).status).toBe(401);
  });

  it('ends the WebSocket and SSE streams of a key revoked on the other instance (within KEY_WATCH_MS)', async () => {
    const tenant = await newTenant(a.url, 'streams');
    const up = await uploadProjection(a.url, tenant.key, exampleSources('customer-totals'), { name: 'totals', sse: true });
    const projectionId = await projectionActive(a.url, tenant.key, up.uploadId);
    const reader = await tenant.post('/auth/keys', { scopes: ['state:read'], name: 'watcher' });
    const keeper = await tenant.post('/auth/keys', { scopes: ['state:read'], name: 'keeper' });
    const ws = await WsCollector.open(b.url, projectionId, reader.body.apiKey);
    const sse = await SseCollector.open(b.url, projectionId, reader.body.apiKey);
    const other = await WsCollector.open(b.url, projectionId, keeper.body.apiKey);
    const revokedAt = Date.now();
    expect((await request(`${a.url}/auth/keys/${reader.body.keyId}`, 'DELETE', undefined, { 'x-api-key': tenant.key })).status).toBe(204);
    await until(
      () => ws.closeCode,
      (code) => code !== null,
      20_000,
      'the revoked key stream to close',
    );
    expect([ws.closeCode, JSON.parse(ws.closeReason)]).toEqual([4001, { code: 'KEY_REVOKED' }]);
    const ended = await until(
      () => sse.events.find((e) => e.event === 'error'),
      (e) => e !== undefined,
      20_000,
      'the SSE stream to end',
    );
    expect(ended!.data).toEqual({ code: 'KEY_REVOKED' });
    expect(Date.now() - revokedAt).toBeLessThan(KEY_WATCH_MS + 5_000);
    // Another key's stream goes on.
    expect(other.closeCode).toBeNull();
    await other.close();
    sse.close();
  });

  it('two instances making keys at once never pass the per-tenant cap together', async () => {
    const tenant = await newTenant(a.url, 'cap');
    const onB = clientFor(b.url, tenant.key);
    // The tenant's first key is one live key: 99 more fill the cap of 100. Ask 110 at once, half on each instance.
    const answers = await Promise.all(
      Array.from({ length: 110 }, (_, i) => (i % 2 ? onB : tenant).post('/auth/keys', { scopes: [], name: `k${i}` })),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(99);
    expect(answers.filter((r) => r.status === 403).every((r) => r.body.error === 'QUOTA_EXCEEDED')).toBe(true);
    expect((await tenant.get('/auth/keys')).body.keys).toHaveLength(100);
  });
});

/**
 * A store made before scoped keys: every migration before the api-key one, a tenant and a key
 * written as the service then wrote them; then the service of this version starts on it (and
 * migrates). The key keeps every scope.
 */
describe.each(STORE_BACKENDS)('a key made before scopes existed, on %s', (backend) => {
  let svc: RunningService;
  let dataDir: string;
  const apiKey = 'esk_made-before-scopes-0123456789abcdefghij';
  const tenantId = '3f1d7c4e-0000-4000-8000-000000000001';

  beforeAll(async () => {
    const env = await envFor(backend);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-old-keys-'));
    const old = (list: string[], sql: string) => list.slice(0, list.indexOf(sql));
    const key = [tenantId, hashApiKey(apiKey)];
    if (backend === 'sqlite') {
      const db = new Database(path.join(dataDir, 'events.sqlite'));
      db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
      old(SQLITE_MIGRATIONS, apiKeyScopesMigration('INTEGER')).forEach((sql, i) => {
        db.exec(sql);
        db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(i + 1, Date.now());
      });
      db.prepare("INSERT INTO tenants (tenant_id, name, created_at) VALUES (?, 'old', 1)").run(tenantId);
      db.prepare('INSERT INTO tenant_heads (tenant_id, position) VALUES (?, 0)').run(tenantId);
      db.prepare("INSERT INTO api_keys (key_id, tenant_id, key_hash, created_at) VALUES ('key_old', ?, ?, 1)").run(...key);
      db.close();
    } else {
      const client = new PgClient({ connectionString: env.DATABASE_URL });
      await client.connect();
      await client.query('CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
      const list = old(POSTGRES_MIGRATIONS, apiKeyScopesMigration('timestamptz'));
      for (let i = 0; i < list.length; i++) {
        await client.query(list[i]);
        await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [i + 1]);
      }
      await client.query("INSERT INTO tenants (tenant_id, name, created_at) VALUES ($1, 'old', now())", [tenantId]);
      await client.query('INSERT INTO tenant_heads (tenant_id, position) VALUES ($1, 0)', [tenantId]);
      await client.query("INSERT INTO api_keys (key_id, tenant_id, key_hash, created_at) VALUES ('key_old', $1, $2, now())", key);
      await client.end();
    }
    svc = await startService({ ...env, DATA_DIR: dataDir });
  }, 180_000);
  afterAll(async () => {
    await svc?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('holds every scope: whoami lists them all, and routes of each scope answer', async () => {
    const old = clientFor(svc.url, apiKey, tenantId);
    expect((await old.get('/auth/whoami')).body).toEqual({
      tenantId,
      name: 'old',
      createdAt: expect.any(String),
      keyId: 'key_old',
      scopes: [...API_SCOPES],
    });
    expect((await old.post('/events', { aggregateId: 'a-1', eventType: 'E', data: {} })).status).toBe(201);
    expect((await old.get('/events/a-1')).body.events).toHaveLength(1);
    expect((await old.get('/projections')).status).toBe(200);
    expect((await old.post('/webhooks/rotate', undefined)).status).toBe(200);
    const listed = await old.get('/auth/keys');
    expect(listed.body.keys).toEqual([expect.objectContaining({ keyId: 'key_old', allScopes: true, name: null, expiresAt: null })]);
    // It may make a key with any scope, since it holds them all.
    expect((await old.post('/auth/keys', { scopes: [...API_SCOPES], name: 'full' })).status).toBe(201);
  });
});
