import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { clientFor, ServiceProcess } from '../support/service-harness';

const cli = path.join(__dirname, '..', '..', 'dist', 'src', 'admin-cli.js');
const run = (env: Record<string, string>, ...args: string[]) =>
  execFileSync(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });

describe('admin CLI', () => {
  it('creates a tenant whose key the service accepts, issues a scoped key, and revokes a key (seen by the running service at once)', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-cli-'));
    const env = { DATA_DIR: dataDir };
    const created = JSON.parse(run(env, 'create-tenant', 'cli', 'tenant'));
    expect(created).toMatchObject({ name: 'cli tenant', apiKey: expect.stringMatching(/^esk_/) });
    expect(run(env, 'list-tenants')).toContain(created.tenantId);

    const scoped = JSON.parse(run(env, 'issue-key', created.tenantId, '--scopes', 'events:read,state:read', '--name', 'dashboard'));
    expect(scoped).toEqual({ keyId: expect.stringMatching(/^key_/), apiKey: expect.stringMatching(/^esk_/) });
    const listed = JSON.parse(run(env, 'list-keys', created.tenantId)).keys;
    expect(listed).toEqual([
      expect.objectContaining({ keyId: created.keyId, name: null, allScopes: true }),
      expect.objectContaining({ keyId: scoped.keyId, name: 'dashboard', scopes: ['events:read', 'state:read'], allScopes: false }),
    ]);
    expect(JSON.stringify(listed)).not.toContain(scoped.apiKey);
    expect(() => run(env, 'issue-key', created.tenantId, '--scopes', 'events:everything')).toThrow(/unknown scope/);

    const svc = new ServiceProcess(env);
    await svc.start();
    try {
      const client = clientFor(svc.url, created.apiKey);
      expect((await client.get('/auth/whoami')).body).toMatchObject({ tenantId: created.tenantId, name: 'cli tenant' });
      const dashboard = clientFor(svc.url, scoped.apiKey);
      expect((await dashboard.get('/auth/whoami')).body).toMatchObject({ keyId: scoped.keyId, scopes: ['events:read', 'state:read'] });
      expect((await dashboard.post('/events', { aggregateId: 'a-1', eventType: 'E', data: {} })).body).toMatchObject({
        error: 'FORBIDDEN',
        missingScope: 'events:write',
      });
      run(env, 'revoke-key', created.tenantId, created.keyId);
      // Keys are read per request (API_KEY_CACHE_MS=0 by default): the running service sees the CLI's revocation at once.
      expect((await client.get('/auth/whoami')).status).toBe(401);
      expect((await dashboard.get('/auth/whoami')).status).toBe(200);
    } finally {
      await svc.kill('SIGTERM');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('fails with usage on an unknown command', () => {
    expect(() => run({ DATA_DIR: os.tmpdir() }, 'frobnicate')).toThrow(/unknown command/);
  });
});
