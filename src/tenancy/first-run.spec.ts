import { spawnSync } from 'node:child_process';
import { ApiKeyRecord, TenantRecord, TenantRepository } from '../store/tenant-repository.port';
import { FirstRun, firstRunNotice } from './first-run';
import { TenantDirectory } from './tenant-directory';

/** The store's one-transaction "no tenant yet" check, in memory: the decision under test is FirstRun's. */
function directory(tenants: TenantRecord[] = []): { dir: TenantDirectory; tenants: TenantRecord[] } {
  const keys: ApiKeyRecord[] = [];
  const repo: Partial<TenantRepository> = {
    createFirstTenant: async (t, k) => {
      if (tenants.length) return false;
      tenants.push(t);
      keys.push({ ...k, revokedAt: null });
      return true;
    },
    findKeyByHash: async (h) => keys.find((k) => k.keyHash === h) ?? null,
    getTenant: async (id) => tenants.find((t) => t.tenantId === id) ?? null,
  };
  return { dir: new TenantDirectory(repo as TenantRepository, 0), tenants };
}

const nobodySaid = { adminToken: undefined, bootstrapApiKey: undefined, firstRunTenant: true };

describe('FirstRun', () => {
  it('creates a tenant named default whose key authenticates, when nobody said how tenants are made', async () => {
    const { dir, tenants } = directory();
    const created = await new FirstRun(dir, nobodySaid).ensure();
    expect(created).toMatchObject({ name: 'default', apiKey: expect.stringMatching(/^esk_/) });
    expect(tenants).toHaveLength(1);
    expect((await dir.authenticate(created!.apiKey))?.tenantId).toBe(created!.tenantId);
  });

  it('creates nothing on a store that has a tenant already (a restart)', async () => {
    const { dir, tenants } = directory([{ tenantId: 't', name: 'default', createdAt: 1 }]);
    const run = new FirstRun(dir, nobodySaid);
    expect(await run.ensure()).toBeNull();
    expect(run.created).toBeNull();
    expect(tenants).toHaveLength(1);
  });

  it.each([
    ['ADMIN_TOKEN is set', { adminToken: 'admin-token-0123456789' }],
    ['BOOTSTRAP_API_KEY is set', { bootstrapApiKey: 'bootstrap-key-0123456789' }],
    ['FIRST_RUN_TENANT=false', { firstRunTenant: false }],
  ])('creates nothing when %s', async (_why, config) => {
    const { dir, tenants } = directory();
    expect(await new FirstRun(dir, { ...nobodySaid, ...config }).ensure()).toBeNull();
    expect(tenants).toHaveLength(0);
  });

  it('prints the key and an append that a shell runs as it is', () => {
    const notice = firstRunNotice({ tenantId: 'tid', name: 'default', apiKey: 'esk_abc' }, 'http://localhost:3000');
    expect(notice).toContain('\n  esk_abc\n');
    const curl = notice
      .split('\n')
      .find((l) => l.includes('-X POST'))!
      .trim();
    // The shell's own parse of the line: the arguments curl would get.
    const argv = spawnSync('sh', ['-c', `printf '%s\\n' ${curl.slice('curl'.length)}`], { encoding: 'utf8' }).stdout.split('\n');
    expect(argv).toEqual(expect.arrayContaining(['http://localhost:3000/events', 'x-api-key: esk_abc', 'content-type: application/json']));
    expect(JSON.parse(argv[argv.indexOf('-d') + 1])).toEqual({ aggregateId: 'order-1', eventType: 'OrderPlaced', data: { total: 42 } });
  });
});
