import { ApiKeyRecord, TenantRecord, TenantRepository } from '../store/tenant-repository.port';
import { TenantDirectory } from './tenant-directory';

/** In-memory repository: the logic under test is the directory's, not a store's. */
class MemoryTenants implements TenantRepository {
  tenants = new Map<string, TenantRecord>();
  keys = new Map<string, ApiKeyRecord>();
  lookups = 0;
  async createTenant(t: TenantRecord) {
    this.tenants.set(t.tenantId, t);
  }
  async createFirstTenant(t: TenantRecord, k: Omit<ApiKeyRecord, 'revokedAt'>) {
    if (this.tenants.size > 0) return false;
    await this.createTenant(t);
    await this.addKey(k);
    return true;
  }
  async getTenant(id: string) {
    return this.tenants.get(id) ?? null;
  }
  async listTenants() {
    return [...this.tenants.values()];
  }
  async addKey(k: Omit<ApiKeyRecord, 'revokedAt'>) {
    this.keys.set(k.keyHash, { ...k, revokedAt: null });
  }
  async findKeyByHash(h: string) {
    this.lookups++;
    return this.keys.get(h) ?? null;
  }
  async revokeKey(tenantId: string, keyId: string, at: number) {
    for (const k of this.keys.values()) {
      if (k.tenantId === tenantId && k.keyId === keyId && k.revokedAt === null) {
        k.revokedAt = at;
        return true;
      }
    }
    return false;
  }
  async getLimits() {
    return null;
  }
  async putLimits() {
    return false;
  }
}

describe('TenantDirectory', () => {
  it('issues a key that names its tenant and stores only its hash', async () => {
    const repo = new MemoryTenants();
    const dir = new TenantDirectory(repo, 10_000);
    const { tenant, apiKey } = await dir.createTenant('acme');
    expect(apiKey).toMatch(/^esk_[A-Za-z0-9_-]{43}$/);
    expect((await dir.authenticate(apiKey))?.tenantId).toBe(tenant.tenantId);
    expect(JSON.stringify([...repo.keys.values()])).not.toContain(apiKey);
  });

  it('refuses unknown, missing and revoked keys', async () => {
    const dir = new TenantDirectory(new MemoryTenants(), 10_000);
    const { tenant, apiKey, keyId } = await dir.createTenant('acme');
    expect(await dir.authenticate(undefined)).toBeNull();
    expect(await dir.authenticate('esk_nope')).toBeNull();
    await dir.revokeKey(tenant.tenantId, keyId);
    expect(await dir.authenticate(apiKey)).toBeNull();
  });

  it('caches a resolved key until it expires', async () => {
    const repo = new MemoryTenants();
    let now = 1_000;
    const dir = new TenantDirectory(repo, 5_000, () => now);
    const { apiKey } = await dir.createTenant('acme');
    await dir.authenticate(apiKey);
    await dir.authenticate(apiKey);
    expect(repo.lookups).toBe(1);
    now += 6_000;
    await dir.authenticate(apiKey);
    expect(repo.lookups).toBe(2);
  });

  it('makes a bootstrap key work once and reuses its tenant after', async () => {
    const dir = new TenantDirectory(new MemoryTenants(), 10_000);
    const a = await dir.ensureKey('bootstrap-key-0123456789', 'bootstrap');
    const b = await dir.ensureKey('bootstrap-key-0123456789', 'bootstrap');
    expect(a.tenantId).toBe(b.tenantId);
    expect((await dir.authenticate('bootstrap-key-0123456789'))?.name).toBe('bootstrap');
  });
});
