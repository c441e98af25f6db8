import { DomainError } from '../common/domain-error';
import { ApiKeyRecord, NewApiKey, TenantRecord, TenantRepository } from '../store/tenant-repository.port';
import { KeyWatch } from './key-watch';
import { MAX_TENANT_KEYS, TenantDirectory } from './tenant-directory';

/** In-memory repository: the logic under test is the directory's, not a store's. */
class MemoryTenants implements TenantRepository {
  tenants = new Map<string, TenantRecord>();
  keys = new Map<string, ApiKeyRecord>();
  lookups = 0;
  async createTenant(t: TenantRecord) {
    this.tenants.set(t.tenantId, t);
  }
  async createFirstTenant(t: TenantRecord, k: NewApiKey) {
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
  async addKey(k: NewApiKey) {
    this.keys.set(k.keyHash, { ...k, revokedAt: null });
  }
  async addKeyWithin(k: NewApiKey, maxLive: number, now: number) {
    const live = [...this.keys.values()].filter(
      (x) => x.tenantId === k.tenantId && x.revokedAt === null && (x.expiresAt == null || x.expiresAt > now),
    );
    if (live.length >= maxLive) return false;
    await this.addKey(k);
    return true;
  }
  async liveKeyHashes(hashes: string[], now: number) {
    return hashes.filter((h) => {
      const k = this.keys.get(h);
      return k && k.revokedAt === null && (k.expiresAt == null || k.expiresAt > now);
    });
  }
  async listKeys(tenantId: string) {
    return [...this.keys.values()].filter((k) => k.tenantId === tenantId && k.revokedAt === null);
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
    await nextTurn(); // the lookup of the turn is shared (see below)
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

  describe('scoped keys', () => {
    it('resolves a key with its id, scopes and expiry; an admin key without scopes holds every scope (null)', async () => {
      const dir = new TenantDirectory(new MemoryTenants(), 0);
      const { tenant, apiKey, keyId } = await dir.createTenant('acme');
      expect((await dir.resolve(apiKey))?.key).toEqual({ keyId, scopes: null, expiresAt: null });
      const narrow = await dir.issueKey(tenant.tenantId, { scopes: ['events:read'], name: 'dash' });
      expect((await dir.resolve(narrow.apiKey))?.key.scopes).toEqual(['events:read']);
    });

    it('refuses an expired key with 401 saying so, once its time has come (cached or not)', async () => {
      let now = 1_000;
      const dir = new TenantDirectory(new MemoryTenants(), 60_000, () => now);
      const { tenant } = await dir.createTenant('acme');
      const k = await dir.issueKey(tenant.tenantId, { expiresAt: 5_000 });
      expect(await dir.resolve(k.apiKey)).not.toBeNull();
      now = 5_000;
      const refused = await dir.verify(k.apiKey);
      expect(refused).toBeInstanceOf(DomainError);
      expect(refused).toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringContaining('expired') });
    });

    it('with cacheMs 0, requests with one key in one event-loop turn share one lookup; later turns look again', async () => {
      const repo = new MemoryTenants();
      const dir = new TenantDirectory(repo, 0);
      const { apiKey } = await dir.createTenant('acme');
      await nextTurn();
      const before = repo.lookups;
      const all = await Promise.all(Array.from({ length: 10 }, () => dir.resolve(apiKey)));
      expect(all.every((r) => r !== null)).toBe(true);
      expect(repo.lookups - before).toBe(1);
      await dir.resolve(apiKey); // settled, but the same turn: shared
      expect(repo.lookups - before).toBe(1);
      await nextTurn();
      await dir.resolve(apiKey);
      expect(repo.lookups - before).toBe(2);
    });

    it('with cacheMs 0 a revocation by another instance holds from the next turn', async () => {
      const repo = new MemoryTenants();
      const a = new TenantDirectory(repo, 0);
      const b = new TenantDirectory(repo, 0);
      const { tenant, apiKey, keyId } = await a.createTenant('acme');
      await nextTurn();
      expect(await b.resolve(apiKey)).not.toBeNull();
      await a.revokeKey(tenant.tenantId, keyId);
      await nextTurn();
      expect(await b.resolve(apiKey)).toBeNull();
      // and on the instance that revoked, at once
      const { apiKey: k2, keyId: id2 } = await a.issueKey(tenant.tenantId);
      expect(await a.resolve(k2)).not.toBeNull();
      await a.revokeKey(tenant.tenantId, id2);
      expect(await a.resolve(k2)).toBeNull();
    });

    it('with cacheMs 0 a revocation by another instance holds on the next request', async () => {
      const repo = new MemoryTenants();
      const a = new TenantDirectory(repo, 0);
      const b = new TenantDirectory(repo, 0);
      const { tenant, apiKey, keyId } = await a.createTenant('acme');
      expect(await b.resolve(apiKey)).not.toBeNull();
      await a.revokeKey(tenant.tenantId, keyId);
      expect(await b.resolve(apiKey)).toBeNull();
    });

    it('lets a key make keys only with scopes it holds and no later expiry than its own', async () => {
      const dir = new TenantDirectory(new MemoryTenants(), 0);
      const { tenant } = await dir.createTenant('acme');
      const maker = { keyId: 'key_m', scopes: ['keys:manage', 'events:read'] as const, expiresAt: null };
      await expect(
        dir.createOwnKey(
          tenant.tenantId,
          { ...maker, scopes: [...maker.scopes] },
          { scopes: ['events:write'], name: 'x', expiresAt: null },
        ),
      ).rejects.toMatchObject({ code: 'FORBIDDEN', details: { missingScope: 'events:write' } });
      const made = await dir.createOwnKey(
        tenant.tenantId,
        { ...maker, scopes: [...maker.scopes] },
        { scopes: ['events:read'], name: 'r', expiresAt: null },
      );
      expect(made).toMatchObject({ name: 'r', scopes: ['events:read'], allScopes: false, apiKey: expect.stringMatching(/^esk_/) });
      const temporary = { keyId: 'key_t', scopes: null, expiresAt: Date.now() + 60_000 };
      await expect(
        dir.createOwnKey(tenant.tenantId, temporary, { scopes: ['events:read'], name: 'f', expiresAt: null }),
      ).rejects.toMatchObject({
        code: 'VALIDATION_FAILED',
        details: { field: 'expiresAt' },
      });
    });

    it(`keeps a tenant at ${MAX_TENANT_KEYS} live keys made by keys`, async () => {
      const dir = new TenantDirectory(new MemoryTenants(), 0);
      const { tenant } = await dir.createTenant('acme');
      const all = { keyId: 'key_a', scopes: null, expiresAt: null };
      for (let i = 1; i < MAX_TENANT_KEYS; i++)
        await dir.createOwnKey(tenant.tenantId, all, { scopes: [], name: `k${i}`, expiresAt: null });
      await expect(dir.createOwnKey(tenant.tenantId, all, { scopes: [], name: 'over', expiresAt: null })).rejects.toMatchObject({
        code: 'QUOTA_EXCEEDED',
      });
      expect(await dir.listKeys(tenant.tenantId)).toHaveLength(MAX_TENANT_KEYS);
    });
  });

  describe('watching the keys of open streams', () => {
    it('calls the watchers of a key once it is revoked, not those of live keys, and stops asking when nothing is watched', async () => {
      const repo = new MemoryTenants();
      const dir = new TenantDirectory(repo, 0, Date.now, 60_000);
      const { tenant } = await dir.createTenant('acme');
      const a = await dir.issueKey(tenant.tenantId);
      const b = await dir.issueKey(tenant.tenantId);
      const ended: string[] = [];
      const hashA = (await dir.resolve(a.apiKey))!.keyHash;
      const hashB = (await dir.resolve(b.apiKey))!.keyHash;
      dir.watchKey(hashA, () => ended.push('a1'));
      dir.watchKey(hashA, () => ended.push('a2'));
      const unwatchB = dir.watchKey(hashB, () => ended.push('b'));
      const watch = (dir as unknown as { keyWatch: KeyWatch }).keyWatch;
      await watch.check();
      expect(ended).toEqual([]);
      await dir.revokeKey(tenant.tenantId, a.keyId);
      await watch.check();
      expect(ended).toEqual(['a1', 'a2']);
      await watch.check();
      expect(ended).toEqual(['a1', 'a2']);
      unwatchB();
      expect(watch.watchedKeys()).toBe(0);
    });

    it('ends the streams of a key at its expiry', async () => {
      let now = 1_000;
      const repo = new MemoryTenants();
      const watch = new KeyWatch(repo, 60_000, () => now);
      const dir = new TenantDirectory(repo, 0, () => now);
      const { tenant } = await dir.createTenant('acme');
      const k = await dir.issueKey(tenant.tenantId, { expiresAt: 2_000 });
      let ended = 0;
      watch.watch((await dir.resolve(k.apiKey))!.keyHash, () => ended++);
      await watch.check();
      expect(ended).toBe(0);
      now = 2_000;
      await watch.check();
      expect(ended).toBe(1);
    });
  });
});

/** After every callback of this event-loop turn (setImmediate runs after the turn's I/O). */
function nextTurn(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}
