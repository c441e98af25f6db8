import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { clientFor, ServiceProcess } from '../support/service-harness';

const cli = path.join(__dirname, '..', '..', 'dist', 'src', 'tenancy', 'admin-cli.js');
const run = (env: Record<string, string>, ...args: string[]) =>
  execFileSync(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });

describe('admin CLI', () => {
  it('creates a tenant whose key the service accepts, and revokes it', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-cli-'));
    const env = { DATA_DIR: dataDir };
    const created = JSON.parse(run(env, 'create-tenant', 'cli', 'tenant'));
    expect(created).toMatchObject({ name: 'cli tenant', apiKey: expect.stringMatching(/^esk_/) });
    expect(run(env, 'list-tenants')).toContain(created.tenantId);

    const svc = new ServiceProcess(env);
    await svc.start();
    try {
      const client = clientFor(svc.url, created.apiKey);
      expect((await client.get('/auth/whoami')).body).toMatchObject({ tenantId: created.tenantId, name: 'cli tenant' });
      run(env, 'revoke-key', created.tenantId, created.keyId);
      // The service caches keys for API_KEY_CACHE_MS (default 10 s); a fresh process sees the revocation at once.
    } finally {
      await svc.kill('SIGTERM');
    }
    const again = new ServiceProcess(env);
    await again.start();
    try {
      expect((await clientFor(again.url, created.apiKey).get('/auth/whoami')).status).toBe(401);
    } finally {
      await again.kill('SIGTERM');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('fails with usage on an unknown command', () => {
    expect(() => run({ DATA_DIR: os.tmpdir() }, 'frobnicate')).toThrow(/unknown command/);
  });
});
