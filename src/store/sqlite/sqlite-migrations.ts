import { EVENT_TRACE_MIGRATION } from '../event-trace-schema';
import {
  notificationsMigration,
  WEBHOOK_TURNS_MIGRATION,
  WEBHOOK_KEY_HEADS_MIGRATION,
  sharedStatesMigration,
  webhookUrlMigration,
  NOTIFICATION_TRACE_MIGRATION,
} from '../notification-schema';
import { webhookSuspensionsMigration } from '../webhook-suspension-schema';
import { droppedVersionsMigration } from '../projection-schema';
import { EVENT_LOG_FILTER_MIGRATION } from '../event-log-schema';
import { uploadClaimMigration } from '../upload-schema';
import { idempotencyKeysMigration } from '../idempotency-schema';
import { apiKeyScopesMigration } from '../api-key-schema';
import { erasureMigration } from '../erasure-schema';
import { eventWebhooksMigration } from '../event-webhook-schema';

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
  `
  CREATE TABLE uploads (
    upload_id         TEXT NOT NULL,
    tenant_id         TEXT NOT NULL,
    kind              TEXT NOT NULL,
    status            TEXT NOT NULL,
    sources           TEXT NOT NULL,
    meta              TEXT NOT NULL,
    discovered        TEXT,
    compilation_error TEXT,
    assembly          BLOB,
    assembly_sha256   TEXT,
    created_at        INTEGER NOT NULL,
    compiled_at       INTEGER,
    PRIMARY KEY (tenant_id, upload_id)
  );
  CREATE INDEX uploads_pending ON uploads (created_at) WHERE status = 'pending';
  `,
  `
  CREATE TABLE bindings (
    tenant_id      TEXT NOT NULL,
    aggregate_type TEXT NOT NULL,
    reducer_id     TEXT NOT NULL,
    class_name     TEXT NOT NULL,
    binding_id     TEXT NOT NULL,
    bound_at       INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, aggregate_type)
  );
  -- One row per aggregate: the latest state, written in the append's own transaction.
  CREATE TABLE snapshots (
    tenant_id      TEXT NOT NULL,
    aggregate_id   TEXT NOT NULL,
    aggregate_type TEXT NOT NULL,
    binding_id     TEXT NOT NULL,
    version        INTEGER NOT NULL,
    state          TEXT NOT NULL,
    failed_version INTEGER,
    error          TEXT,
    updated_at     INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, aggregate_id)
  ) WITHOUT ROWID;
  CREATE INDEX streams_by_type ON streams (tenant_id, aggregate_type, aggregate_id);
  `,
  `
  CREATE TABLE projections (
    tenant_id       TEXT NOT NULL,
    projection_id   TEXT NOT NULL,
    name            TEXT NOT NULL,
    active_version  TEXT,
    pending_version TEXT,
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, projection_id),
    UNIQUE (tenant_id, name)
  );
  CREATE TABLE projection_versions (
    tenant_id       TEXT NOT NULL,
    version_id      TEXT NOT NULL,
    projection_id   TEXT NOT NULL,
    class_name      TEXT NOT NULL,
    target_position INTEGER NOT NULL,
    routed_position INTEGER NOT NULL DEFAULT 0,
    caught_up_at    INTEGER,
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, version_id)
  );
  -- Each lane's order lives here: routed events waiting for their key's lane.
  CREATE TABLE lane_inbox (
    tenant_id  TEXT NOT NULL,
    version_id TEXT NOT NULL,
    state_key  TEXT NOT NULL,
    position   INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, version_id, state_key, position)
  );
  CREATE INDEX lane_inbox_by_position ON lane_inbox (tenant_id, version_id, position);
  CREATE TABLE lanes (
    tenant_id        TEXT NOT NULL,
    version_id       TEXT NOT NULL,
    state_key        TEXT NOT NULL,
    state            TEXT,
    applied_position INTEGER NOT NULL DEFAULT 0,
    updated_at       INTEGER,
    held_position    INTEGER,
    held_error       TEXT,
    attempts         INTEGER NOT NULL DEFAULT 0,
    -- Lease: with several instances, one lane runs in one instance at a time.
    lease_owner      TEXT,
    lease_until      INTEGER,
    PRIMARY KEY (tenant_id, version_id, state_key)
  );
  `,
  notificationsMigration('INTEGER'),
  `
  -- Per-tenant limit overrides (src/quotas); a tenant without a row has the configured defaults.
  CREATE TABLE tenant_limits (
    tenant_id  TEXT PRIMARY KEY REFERENCES tenants(tenant_id),
    limits     TEXT NOT NULL,
    updated_at INTEGER NOT NULL
  );
  `,
  WEBHOOK_TURNS_MIGRATION,
  WEBHOOK_KEY_HEADS_MIGRATION,
  sharedStatesMigration('sqlite'),
  webhookSuspensionsMigration('INTEGER'),
  droppedVersionsMigration('INTEGER'),
  webhookUrlMigration('sqlite'),
  NOTIFICATION_TRACE_MIGRATION,
  uploadClaimMigration('INTEGER'),
  idempotencyKeysMigration('INTEGER'),
  apiKeyScopesMigration('INTEGER'),
  EVENT_TRACE_MIGRATION,
  EVENT_LOG_FILTER_MIGRATION,
  erasureMigration('sqlite'),
  eventWebhooksMigration('INTEGER'),
];
