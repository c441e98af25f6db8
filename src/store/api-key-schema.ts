/**
 * Scoped API keys (src/tenancy/scope-check.ts): a key's scopes as one space-separated text of
 * scope names, NULL for every scope (the keys made before this column existed keep every scope);
 * an optional name; an optional expiry (the time type of the other time columns: epoch ms on
 * SQLite, timestamptz on PostgreSQL). The index serves a tenant's listing and its live-key count.
 */
export const apiKeyScopesMigration = (timeType: 'INTEGER' | 'timestamptz') => `
  ALTER TABLE api_keys ADD COLUMN scopes TEXT;
  ALTER TABLE api_keys ADD COLUMN name TEXT;
  ALTER TABLE api_keys ADD COLUMN expires_at ${timeType};
  CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id, created_at);
  `;
