/** Ordered, append-only: a migration once shipped is never edited, only followed. */
export const POSTGRES_MIGRATIONS: string[] = [
  `
  CREATE TABLE tenants (
    tenant_id  text PRIMARY KEY,
    name       text NOT NULL,
    created_at timestamptz NOT NULL
  );
  -- The per-tenant counter row. An append locks it, so commits of one tenant are ordered and a
  -- reader never sees position P+1 before P; a rollback undoes the increment, so no holes.
  CREATE TABLE tenant_heads (
    tenant_id text PRIMARY KEY,
    position  bigint NOT NULL
  );
  CREATE TABLE api_keys (
    key_id     text PRIMARY KEY,
    tenant_id  text NOT NULL REFERENCES tenants(tenant_id),
    key_hash   text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
  );
  CREATE TABLE streams (
    tenant_id      text NOT NULL,
    aggregate_id   text NOT NULL,
    aggregate_type text NOT NULL,
    version        bigint NOT NULL,
    PRIMARY KEY (tenant_id, aggregate_id)
  );
  CREATE TABLE events (
    tenant_id      text NOT NULL,
    position       bigint NOT NULL,
    aggregate_id   text NOT NULL,
    version        bigint NOT NULL,
    event_id       uuid NOT NULL,
    aggregate_type text NOT NULL,
    event_type     text NOT NULL,
    data           text NOT NULL,
    metadata       text,
    correlation_id text,
    causation_id   text,
    created_at     timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, position),
    UNIQUE (tenant_id, aggregate_id, version)
  );
  `,
];
