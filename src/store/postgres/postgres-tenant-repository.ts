import { Pool } from 'pg';
import { ApiKeyRecord, TenantLimitsRecord, TenantRecord, TenantRepository } from '../tenant-repository.port';
import { withTransaction } from './with-transaction';

// Arbitrary constant: serialises first-run tenant creation when several instances start together.
const FIRST_TENANT_LOCK = 72_601_144;

const ms = (d: Date | null): number | null => (d === null ? null : d.getTime());

export class PostgresTenantRepository implements TenantRepository {
  constructor(private readonly pool: Pool) {}

  async createTenant(t: TenantRecord): Promise<void> {
    await withTransaction(this.pool, async (client) => {
      await client.query('INSERT INTO tenants (tenant_id, name, created_at) VALUES ($1, $2, $3)', [
        t.tenantId,
        t.name,
        new Date(t.createdAt),
      ]);
      await client.query('INSERT INTO tenant_heads (tenant_id, position) VALUES ($1, 0)', [t.tenantId]);
    });
  }

  async createFirstTenant(t: TenantRecord, k: Omit<ApiKeyRecord, 'revokedAt'>): Promise<boolean> {
    return withTransaction(this.pool, async (client) => {
      // Held to the transaction's end: the next instance checks only after this one has committed.
      await client.query('SELECT pg_advisory_xact_lock($1)', [FIRST_TENANT_LOCK]);
      if ((await client.query('SELECT 1 FROM tenants LIMIT 1')).rowCount) return false;
      await client.query('INSERT INTO tenants (tenant_id, name, created_at) VALUES ($1, $2, $3)', [
        t.tenantId,
        t.name,
        new Date(t.createdAt),
      ]);
      await client.query('INSERT INTO tenant_heads (tenant_id, position) VALUES ($1, 0)', [t.tenantId]);
      await client.query('INSERT INTO api_keys (key_id, tenant_id, key_hash, created_at) VALUES ($1, $2, $3, $4)', [
        k.keyId,
        k.tenantId,
        k.keyHash,
        new Date(k.createdAt),
      ]);
      return true;
    });
  }

  async getTenant(tenantId: string): Promise<TenantRecord | null> {
    const { rows } = await this.pool.query('SELECT tenant_id, name, created_at FROM tenants WHERE tenant_id = $1', [tenantId]);
    return rows[0] ? { tenantId: rows[0].tenant_id, name: rows[0].name, createdAt: rows[0].created_at.getTime() } : null;
  }

  async listTenants(): Promise<TenantRecord[]> {
    const { rows } = await this.pool.query('SELECT tenant_id, name, created_at FROM tenants ORDER BY created_at, tenant_id');
    return rows.map((r) => ({ tenantId: r.tenant_id, name: r.name, createdAt: r.created_at.getTime() }));
  }

  async addKey(k: Omit<ApiKeyRecord, 'revokedAt'>): Promise<void> {
    await this.pool.query('INSERT INTO api_keys (key_id, tenant_id, key_hash, created_at) VALUES ($1, $2, $3, $4)', [
      k.keyId,
      k.tenantId,
      k.keyHash,
      new Date(k.createdAt),
    ]);
  }

  async findKeyByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    const { rows } = await this.pool.query({
      name: 'es_find_key',
      text: 'SELECT key_id, tenant_id, key_hash, created_at, revoked_at FROM api_keys WHERE key_hash = $1',
      values: [keyHash],
    });
    const r = rows[0];
    return r
      ? { keyId: r.key_id, tenantId: r.tenant_id, keyHash: r.key_hash, createdAt: r.created_at.getTime(), revokedAt: ms(r.revoked_at) }
      : null;
  }

  async revokeKey(tenantId: string, keyId: string, at: number): Promise<boolean> {
    const res = await this.pool.query('UPDATE api_keys SET revoked_at = $1 WHERE tenant_id = $2 AND key_id = $3 AND revoked_at IS NULL', [
      new Date(at),
      tenantId,
      keyId,
    ]);
    return (res.rowCount ?? 0) > 0;
  }

  async getLimits(tenantId: string): Promise<TenantLimitsRecord | null> {
    const { rows } = await this.pool.query('SELECT tenant_id, limits, updated_at FROM tenant_limits WHERE tenant_id = $1', [tenantId]);
    return rows[0] ? { tenantId: rows[0].tenant_id, limits: rows[0].limits, updatedAt: rows[0].updated_at.getTime() } : null;
  }

  async putLimits(rec: TenantLimitsRecord): Promise<boolean> {
    // Only for a tenant that exists: no row, no change.
    const res = await this.pool.query(
      `INSERT INTO tenant_limits (tenant_id, limits, updated_at) SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM tenants WHERE tenant_id = $1)
       ON CONFLICT (tenant_id) DO UPDATE SET limits = excluded.limits, updated_at = excluded.updated_at`,
      [rec.tenantId, rec.limits, new Date(rec.updatedAt)],
    );
    return (res.rowCount ?? 0) > 0;
  }
}
