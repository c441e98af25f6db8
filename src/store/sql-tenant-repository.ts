import { epochMs, serializedBy, sqlTime } from './sql-dialect';
import { SqlRunner } from './sql-runner';
import { createHash } from 'node:crypto';
import { ApiKeyRecord, NewApiKey, TenantLimitsRecord, TenantRecord, TenantRepository } from './tenant-repository.port';

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
  scopes: string | null;
  name: string | null;
  expires_at: number | Date | null;
}

const KEY_COLUMNS = 'key_id, tenant_id, key_hash, created_at, revoked_at, scopes, name, expires_at';
const INSERT_KEY = 'INSERT INTO api_keys (key_id, tenant_id, key_hash, created_at, scopes, name, expires_at)';

/** Scopes are kept as one text of space-separated names (scope names hold no spaces); null is every scope. */
const keyParams = (k: NewApiKey): unknown[] => [
  k.keyId,
  k.tenantId,
  k.keyHash,
  sqlTime(k.createdAt),
  k.scopes === null || k.scopes === undefined ? null : k.scopes.join(' '),
  k.name ?? null,
  k.expiresAt === null || k.expiresAt === undefined ? null : sqlTime(k.expiresAt),
];

const toKey = (r: ApiKeyDbRow): ApiKeyRecord => ({
  keyId: r.key_id,
  tenantId: r.tenant_id,
  keyHash: r.key_hash,
  createdAt: epochMs(r.created_at),
  revokedAt: epochMs(r.revoked_at),
  scopes: r.scopes === null ? null : r.scopes.split(' ').filter(Boolean),
  name: r.name,
  expiresAt: epochMs(r.expires_at),
});

/** A per-tenant advisory lock id (PostgreSQL): creations of one tenant's keys counted against its cap one at a time. */
function tenantKeysLock(tenantId: string): number {
  return createHash('sha256').update(`api_keys:${tenantId}`).digest().readUIntBE(0, 6);
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

  async createFirstTenant(t: TenantRecord, k: NewApiKey): Promise<boolean> {
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
      { sql: `${INSERT_KEY} VALUES (?, ?, ?, ?, ?, ?, ?)`, params: keyParams(k) },
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

  async addKey(k: NewApiKey): Promise<void> {
    await this.db.run(`${INSERT_KEY} VALUES (?, ?, ?, ?, ?, ?, ?)`, keyParams(k));
  }

  async addKeyWithin(k: NewApiKey, maxLive: number, now: number): Promise<boolean> {
    // Count and insert in one guarded statement, serialised per tenant (SQLite: its one write lock;
    // PostgreSQL: an advisory lock), so two instances creating keys at once cannot both pass the cap.
    return this.db.batch([
      ...serializedBy(this.db.dialect, tenantKeysLock(k.tenantId)),
      {
        sql: `${INSERT_KEY} SELECT ?, ?, ?, ?, ?, ?, ?
              WHERE (SELECT COUNT(*) FROM api_keys WHERE tenant_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)) < ?`,
        params: [...keyParams(k), k.tenantId, sqlTime(now), maxLive],
        mustChange: true,
      },
    ]);
  }

  async findKeyByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    const [r] = await this.db.all<ApiKeyDbRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE key_hash = ?`, [keyHash]);
    return r ? toKey(r) : null;
  }

  async liveKeyHashes(keyHashes: string[], now: number): Promise<string[]> {
    if (keyHashes.length === 0) return [];
    const rows = await this.db.all<{ key_hash: string }>(
      `SELECT key_hash FROM api_keys WHERE key_hash IN (${keyHashes.map(() => '?').join(', ')})
       AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)`,
      [...keyHashes, sqlTime(now)],
    );
    return rows.map((r) => r.key_hash);
  }

  async listKeys(tenantId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.db.all<ApiKeyDbRow>(
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE tenant_id = ? AND revoked_at IS NULL ORDER BY created_at, key_id`,
      [tenantId],
    );
    return rows.map(toKey);
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
