/** Ordered, append-only: a migration once shipped is never edited, only followed. */
export const SQLITE_MIGRATIONS: string[] = [
  `
  CREATE TABLE tenants (
    tenant_id  TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  -- The per-tenant counter row: positions are drawn from it inside the append transaction.
  CREATE TABLE tenant_heads (
    tenant_id TEXT PRIMARY KEY,
    position  INTEGER NOT NULL
  );
  CREATE TABLE api_keys (
    key_id     TEXT PRIMARY KEY,
    tenant_id  TEXT NOT NULL REFERENCES tenants(tenant_id),
    key_hash   TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
  );
  CREATE TABLE streams (
    tenant_id      TEXT NOT NULL,
    aggregate_id   TEXT NOT NULL,
    aggregate_type TEXT NOT NULL,
    version        INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, aggregate_id)
  ) WITHOUT ROWID;
  CREATE TABLE events (
    tenant_id      TEXT NOT NULL,
    position       INTEGER NOT NULL,
    aggregate_id   TEXT NOT NULL,
    version        INTEGER NOT NULL,
    event_id       TEXT NOT NULL,
    aggregate_type TEXT NOT NULL,
    event_type     TEXT NOT NULL,
    data           TEXT NOT NULL,
    metadata       TEXT,
    correlation_id TEXT,
    causation_id   TEXT,
    created_at     INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, position)
  ) WITHOUT ROWID;
  CREATE UNIQUE INDEX events_by_stream ON events (tenant_id, aggregate_id, version);
  `,
];
