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
}

/** A tenant's limit overrides (src/quotas): JSON text of an object, read and checked by the quotas module. */
export interface TenantLimitsRecord {
  tenantId: string;
  limits: string;
  /** Epoch milliseconds. */
  updatedAt: number;
}

export interface TenantRepository {
  createTenant(tenant: TenantRecord): Promise<void>;
  /**
   * First run: creates this tenant with this key only if the store holds no tenant at all, in one
   * transaction serialised against other instances doing the same; false (nothing written) otherwise.
   */
  createFirstTenant(tenant: TenantRecord, key: Omit<ApiKeyRecord, 'revokedAt'>): Promise<boolean>;
  getTenant(tenantId: string): Promise<TenantRecord | null>;
  listTenants(): Promise<TenantRecord[]>;
  addKey(key: Omit<ApiKeyRecord, 'revokedAt'>): Promise<void>;
  findKeyByHash(keyHash: string): Promise<ApiKeyRecord | null>;
  /** false when no such live key of that tenant exists. */
  revokeKey(tenantId: string, keyId: string, at: number): Promise<boolean>;
  getLimits(tenantId: string): Promise<TenantLimitsRecord | null>;
  /** Replaces the tenant's overrides; false when no such tenant exists. */
  putLimits(record: TenantLimitsRecord): Promise<boolean>;
}
