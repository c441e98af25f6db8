import { epochMs, serializedBy, sqlTime } from './sql-dialect';
import { SqlRunner } from './sql-runner';
import { ApiKeyRecord, TenantLimitsRecord, TenantRecord, TenantRepository } from './tenant-repository.port';

interface TenantDbRow {
  tenant_id: string;
  name: string;
  created_at: number | Date;
}

interface ApiKeyDbRow {
  key_id: string;
  tenant_id: string;
  key_hash: string;
  created_at: number | Date;
  revoked_at: number | Date | null;
}

interface TenantLimitsDbRow {
  tenant_id: string;
  limits: string;
  updated_at: number | Date;
}

// Arbitrary constant: serialises first-run tenant creation when several instances start together.
const FIRST_TENANT_LOCK = 72_601_144;

const toTenant = (r: TenantDbRow): TenantRecord => ({ tenantId: r.tenant_id, name: r.name, createdAt: epochMs(r.created_at) });

/** One implementation for both stores over SqlRunner (the time columns differ: see sql-dialect.ts). */
export class SqlTenantRepository implements TenantRepository {
  constructor(private readonly db: SqlRunner) {}

  async createTenant(t: TenantRecord): Promise<void> {
    await this.db.batch([
      { sql: 'INSERT INTO tenants (tenant_id, name, created_at) VALUES (?, ?, ?)', params: [t.tenantId, t.name, sqlTime(t.createdAt)] },
      { sql: 'INSERT INTO tenant_heads (tenant_id, position) VALUES (?, 0)', params: [t.tenantId] },
    ]);
  }

  async createFirstTenant(t: TenantRecord, k: Omit<ApiKeyRecord, 'revokedAt'>): Promise<boolean> {
    // The check is part of the insert (nothing is written when a tenant exists), and serialised
    // against other instances doing the same: SQLite's write lock, PostgreSQL's advisory lock.
    return this.db.batch([
      ...serializedBy(this.db.dialect, FIRST_TENANT_LOCK),
      {
        sql: 'INSERT INTO tenants (tenant_id, name, created_at) SELECT ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM tenants)',
        params: [t.tenantId, t.name, sqlTime(t.createdAt)],
        mustChange: true,
      },
      { sql: 'INSERT INTO tenant_heads (tenant_id, position) VALUES (?, 0)', params: [t.tenantId] },
      {
        sql: 'INSERT INTO api_keys (key_id, tenant_id, key_hash, created_at) VALUES (?, ?, ?, ?)',
        params: [k.keyId, k.tenantId, k.keyHash, sqlTime(k.createdAt)],
      },
    ]);
  }

  async getTenant(tenantId: string): Promise<TenantRecord | null> {
    const [r] = await this.db.all<TenantDbRow>('SELECT tenant_id, name, created_at FROM tenants WHERE tenant_id = ?', [tenantId]);
    return r ? toTenant(r) : null;
  }

  async listTenants(): Promise<TenantRecord[]> {
    return (await this.db.all<TenantDbRow>('SELECT tenant_id, name, created_at FROM tenants ORDER BY created_at, tenant_id', [])).map(
      toTenant,
    );
  }

  async addKey(k: Omit<ApiKeyRecord, 'revokedAt'>): Promise<void> {
    await this.db.run('INSERT INTO api_keys (key_id, tenant_id, key_hash, created_at) VALUES (?, ?, ?, ?)', [
      k.keyId,
      k.tenantId,
      k.keyHash,
      sqlTime(k.createdAt),
    ]);
  }

  async findKeyByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    const [r] = await this.db.all<ApiKeyDbRow>(
      'SELECT key_id, tenant_id, key_hash, created_at, revoked_at FROM api_keys WHERE key_hash = ?',
      [keyHash],
    );
    return r
      ? { keyId: r.key_id, tenantId: r.tenant_id, keyHash: r.key_hash, createdAt: epochMs(r.created_at), revokedAt: epochMs(r.revoked_at) }
      : null;
  }

  async revokeKey(tenantId: string, keyId: string, at: number): Promise<boolean> {
    const changed = await this.db.run('UPDATE api_keys SET revoked_at = ? WHERE tenant_id = ? AND key_id = ? AND revoked_at IS NULL', [
      sqlTime(at),
      tenantId,
      keyId,
    ]);
    return changed > 0;
  }

  async getLimits(tenantId: string): Promise<TenantLimitsRecord | null> {
    const [r] = await this.db.all<TenantLimitsDbRow>('SELECT tenant_id, limits, updated_at FROM tenant_limits WHERE tenant_id = ?', [
      tenantId,
    ]);
    return r ? { tenantId: r.tenant_id, limits: r.limits, updatedAt: epochMs(r.updated_at) } : null;
  }

  async putLimits(rec: TenantLimitsRecord): Promise<boolean> {
    // Only for a tenant that exists: no row, no change.
    const changed = await this.db.run(
      `INSERT INTO tenant_limits (tenant_id, limits, updated_at) SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM tenants WHERE tenant_id = ?)
       ON CONFLICT (tenant_id) DO UPDATE SET limits = excluded.limits, updated_at = excluded.updated_at`,
      [rec.tenantId, rec.limits, sqlTime(rec.updatedAt), rec.tenantId],
    );
    return changed > 0;
  }
}
