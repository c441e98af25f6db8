export interface TenantRecord {
  tenantId: string;
  name: string;
  /** Epoch milliseconds. */
  createdAt: number;
}

export interface ApiKeyRecord {
  keyId: string;
  tenantId: string;
  /** SHA-256 of the key, hex. The key itself is never stored. */
  keyHash: string;
  createdAt: number;
  revokedAt: number | null;
  /** The scope names the key holds; null (or absent) for every scope. Checked by src/tenancy, not here. */
  scopes?: string[] | null;
  name?: string | null;
  /** Epoch milliseconds; null (or absent): never expires. */
  expiresAt?: number | null;
}

/** A key to store: no revocation yet. */
export type NewApiKey = Omit<ApiKeyRecord, 'revokedAt'>;

/** A tenant's limit overrides (src/quotas): JSON text of an object, read and checked by the quotas module. */
export interface TenantLimitsRecord {
  tenantId: string;
  limits: string;
  /** Epoch milliseconds. */
  updatedAt: number;
}

/**
 * Tenants, their API keys and limit overrides (store.tenants). Adapter: SqlTenantRepository (both
 * stores). Who calls it: tenancy/ (TenantDirectory, FirstRun), quotas/ (TenantLimitsCatalog), tenant transfer.
 */
export abstract class TenantRepository {
  abstract createTenant(tenant: TenantRecord): Promise<void>;
  /**
   * First run: creates this tenant with this key only if the store holds no tenant at all, in one
   * transaction serialised against other instances doing the same; false (nothing written) otherwise.
   */
  abstract createFirstTenant(tenant: TenantRecord, key: NewApiKey): Promise<boolean>;
  abstract getTenant(tenantId: string): Promise<TenantRecord | null>;
  abstract listTenants(): Promise<TenantRecord[]>;
  abstract addKey(key: NewApiKey): Promise<void>;
  /**
   * Adds the key only while the tenant has fewer than `maxLive` live keys (not revoked, not expired
   * at `now`), checked and written in one transaction serialised per tenant against other
   * instances; false (nothing written) when the tenant is at the cap.
   */
  abstract addKeyWithin(key: NewApiKey, maxLive: number, now: number): Promise<boolean>;
  abstract findKeyByHash(keyHash: string): Promise<ApiKeyRecord | null>;
  /** Which of these key hashes name a key still live at `now` (not revoked, not expired). */
  abstract liveKeyHashes(keyHashes: string[], now: number): Promise<string[]>;
  /** The tenant's keys not revoked (expired ones included), oldest first. */
  abstract listKeys(tenantId: string): Promise<ApiKeyRecord[]>;
  /** false when no such live key of that tenant exists. */
  abstract revokeKey(tenantId: string, keyId: string, at: number): Promise<boolean>;
  abstract getLimits(tenantId: string): Promise<TenantLimitsRecord | null>;
  /** Replaces the tenant's overrides; false when no such tenant exists. */
  abstract putLimits(record: TenantLimitsRecord): Promise<boolean>;
}
