import type Database from 'better-sqlite3';
import { ApiKeyRecord, TenantLimitsRecord, TenantRecord, TenantRepository } from '../tenant-repository.port';

export class SqliteTenantRepository implements TenantRepository {
  private stmts!: ReturnType<SqliteTenantRepository['compile']>;

  constructor(private readonly db: Database.Database) {}

  prepare(): void {
    this.stmts = this.compile();
  }

  private compile() {
    const db = this.db;
    return {
      insertTenant: db.prepare('INSERT INTO tenants (tenant_id, name, created_at) VALUES (?, ?, ?)'),
      insertHead: db.prepare('INSERT INTO tenant_heads (tenant_id, position) VALUES (?, 0)'),
      anyTenant: db.prepare('SELECT 1 FROM tenants LIMIT 1'),
      getTenant: db.prepare('SELECT tenant_id, name, created_at FROM tenants WHERE tenant_id = ?'),
      listTenants: db.prepare('SELECT tenant_id, name, created_at FROM tenants ORDER BY created_at, tenant_id'),
      insertKey: db.prepare('INSERT INTO api_keys (key_id, tenant_id, key_hash, created_at) VALUES (?, ?, ?, ?)'),
      findKey: db.prepare('SELECT key_id, tenant_id, key_hash, created_at, revoked_at FROM api_keys WHERE key_hash = ?'),
      revokeKey: db.prepare('UPDATE api_keys SET revoked_at = ? WHERE tenant_id = ? AND key_id = ? AND revoked_at IS NULL'),
      getLimits: db.prepare('SELECT tenant_id, limits, updated_at FROM tenant_limits WHERE tenant_id = ?'),
      // Only for a tenant that exists: no row, no change.
      putLimits: db.prepare(
        `INSERT INTO tenant_limits (tenant_id, limits, updated_at) SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM tenants WHERE tenant_id = ?)
         ON CONFLICT (tenant_id) DO UPDATE SET limits = excluded.limits, updated_at = excluded.updated_at`,
      ),
    };
  }

  async createTenant(t: TenantRecord): Promise<void> {
    this.db.transaction(() => {
      this.stmts.insertTenant.run(t.tenantId, t.name, t.createdAt);
      this.stmts.insertHead.run(t.tenantId);
    })();
  }

  async createFirstTenant(t: TenantRecord, k: Omit<ApiKeyRecord, 'revokedAt'>): Promise<boolean> {
    // IMMEDIATE: the write lock is taken before the check, so instances sharing the file go one at a time.
    return this.db
      .transaction(() => {
        if (this.stmts.anyTenant.get()) return false;
        this.stmts.insertTenant.run(t.tenantId, t.name, t.createdAt);
        this.stmts.insertHead.run(t.tenantId);
        this.stmts.insertKey.run(k.keyId, k.tenantId, k.keyHash, k.createdAt);
        return true;
      })
      .immediate();
  }

  async getTenant(tenantId: string): Promise<TenantRecord | null> {
    const r = this.stmts.getTenant.get(tenantId) as { tenant_id: string; name: string; created_at: number } | undefined;
    return r ? { tenantId: r.tenant_id, name: r.name, createdAt: Number(r.created_at) } : null;
  }

  async listTenants(): Promise<TenantRecord[]> {
    return (this.stmts.listTenants.all() as { tenant_id: string; name: string; created_at: number }[]).map((r) => ({
      tenantId: r.tenant_id,
      name: r.name,
      createdAt: Number(r.created_at),
    }));
  }

  async addKey(k: Omit<ApiKeyRecord, 'revokedAt'>): Promise<void> {
    this.stmts.insertKey.run(k.keyId, k.tenantId, k.keyHash, k.createdAt);
  }

  async findKeyByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    const r = this.stmts.findKey.get(keyHash) as
      { key_id: string; tenant_id: string; key_hash: string; created_at: number; revoked_at: number | null } | undefined;
    return r
      ? {
          keyId: r.key_id,
          tenantId: r.tenant_id,
          keyHash: r.key_hash,
          createdAt: Number(r.created_at),
          revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
        }
      : null;
  }

  async revokeKey(tenantId: string, keyId: string, at: number): Promise<boolean> {
    return this.stmts.revokeKey.run(at, tenantId, keyId).changes > 0;
  }

  async getLimits(tenantId: string): Promise<TenantLimitsRecord | null> {
    const r = this.stmts.getLimits.get(tenantId) as { tenant_id: string; limits: string; updated_at: number } | undefined;
    return r ? { tenantId: r.tenant_id, limits: r.limits, updatedAt: Number(r.updated_at) } : null;
  }

  async putLimits(rec: TenantLimitsRecord): Promise<boolean> {
    return this.stmts.putLimits.run(rec.tenantId, rec.limits, rec.updatedAt, rec.tenantId).changes > 0;
  }
}
