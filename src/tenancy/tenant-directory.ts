import { randomUUID } from 'node:crypto';
import { DomainError, notFound, validationFailed } from '../common/domain-error';
import { TenantRecord, TenantRepository } from '../store/tenant-repository.port';
import { generateApiKey, generateKeyId, hashApiKey, secretsEqual } from './api-key';

export interface IssuedKey {
  keyId: string;
  apiKey: string;
}

interface CachedKey {
  tenant: TenantRecord;
  keyHash: string;
  expiresAt: number;
}

const MAX_CACHED_KEYS = 10_000;

/**
 * Tenants and their keys. Authentication is on every request, so resolved keys are cached for
 * `cacheMs`: a revocation is immediate on the instance that made it and takes at most that long
 * on the others.
 */
export class TenantDirectory {
  private readonly cache = new Map<string, CachedKey>();

  constructor(
    private readonly repo: TenantRepository,
    private readonly cacheMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async createTenant(name: string): Promise<{ tenant: TenantRecord } & IssuedKey> {
    const clean = checkName(name);
    const tenant: TenantRecord = { tenantId: randomUUID(), name: clean, createdAt: this.now() };
    await this.repo.createTenant(tenant);
    const key = await this.issueKey(tenant.tenantId);
    return { tenant, ...key };
  }

  async issueKey(tenantId: string, apiKey: string = generateApiKey()): Promise<IssuedKey> {
    if (!(await this.repo.getTenant(tenantId))) throw notFound(`tenant '${tenantId}'`);
    const keyId = generateKeyId();
    await this.repo.addKey({ keyId, tenantId, keyHash: hashApiKey(apiKey), createdAt: this.now() });
    return { keyId, apiKey };
  }

  async revokeKey(tenantId: string, keyId: string): Promise<void> {
    if (!(await this.repo.revokeKey(tenantId, keyId, this.now()))) throw notFound(`key '${keyId}' of tenant '${tenantId}'`);
    for (const [hash, entry] of this.cache) if (entry.tenant.tenantId === tenantId) this.cache.delete(hash);
  }

  /** A removed tenant (src/tenant-transfer): its cached keys go, so this instance refuses them at once. */
  forgetTenant(tenantId: string): void {
    for (const [hash, entry] of this.cache) if (entry.tenant.tenantId === tenantId) this.cache.delete(hash);
  }

  /** The tenant a key names, or null for a missing, unknown or revoked key. */
  async authenticate(apiKey: string | undefined): Promise<TenantRecord | null> {
    return (await this.resolve(apiKey))?.tenant ?? null;
  }

  /** The tenant a key names and the key's hash (what per-key limits count by), or null. */
  async resolve(apiKey: string | undefined): Promise<{ tenant: TenantRecord; keyHash: string } | null> {
    if (!apiKey || apiKey.length > 512) return null;
    const hash = hashApiKey(apiKey);
    const hit = this.cache.get(hash);
    const now = this.now();
    // The map matched on the full hash already; the constant-time compare is on the store path.
    if (hit && hit.expiresAt > now) return { tenant: hit.tenant, keyHash: hash };
    const key = await this.repo.findKeyByHash(hash);
    if (!key || key.revokedAt !== null || !secretsEqual(key.keyHash, hash)) {
      this.cache.delete(hash);
      return null;
    }
    const tenant = await this.repo.getTenant(key.tenantId);
    if (!tenant) return null;
    if (this.cache.size >= MAX_CACHED_KEYS) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(hash, { tenant, keyHash: key.keyHash, expiresAt: now + this.cacheMs });
    return { tenant, keyHash: hash };
  }

  /** For compose files and test harnesses: makes sure a tenant answers to this exact key. */
  async ensureKey(apiKey: string, tenantName: string): Promise<TenantRecord> {
    const existing = await this.repo.findKeyByHash(hashApiKey(apiKey));
    if (existing) {
      if (existing.revokedAt !== null) throw new DomainError('VALIDATION_FAILED', 'BOOTSTRAP_API_KEY was revoked');
      return (await this.repo.getTenant(existing.tenantId))!;
    }
    const tenant: TenantRecord = { tenantId: randomUUID(), name: checkName(tenantName), createdAt: this.now() };
    await this.repo.createTenant(tenant);
    await this.issueKey(tenant.tenantId, apiKey);
    return tenant;
  }

  /** A tenant with a new key, created only if the store has no tenant yet (null otherwise): see FirstRun. */
  async createFirstTenant(name: string): Promise<({ tenant: TenantRecord } & IssuedKey) | null> {
    const tenant: TenantRecord = { tenantId: randomUUID(), name: checkName(name), createdAt: this.now() };
    const apiKey = generateApiKey();
    const keyId = generateKeyId();
    const created = await this.repo.createFirstTenant(tenant, {
      keyId,
      tenantId: tenant.tenantId,
      keyHash: hashApiKey(apiKey),
      createdAt: tenant.createdAt,
    });
    return created ? { tenant, keyId, apiKey } : null;
  }

  listTenants(): Promise<TenantRecord[]> {
    return this.repo.listTenants();
  }
}

function checkName(name: unknown): string {
  if (typeof name !== 'string' || name.trim().length === 0 || name.length > 200) {
    throw validationFailed('name', 'must be a non-empty string of at most 200 characters');
  }
  return name.trim();
}
