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
  `
  CREATE TABLE uploads (
    upload_id         text NOT NULL,
    tenant_id         text NOT NULL,
    kind              text NOT NULL,
    status            text NOT NULL,
    sources           text NOT NULL,
    meta              text NOT NULL,
    discovered        text,
    compilation_error text,
    assembly          bytea,
    assembly_sha256   text,
    created_at        timestamptz NOT NULL,
    compiled_at       timestamptz,
    PRIMARY KEY (tenant_id, upload_id)
  );
  CREATE INDEX uploads_pending ON uploads (created_at) WHERE status = 'pending';
  `,
  `
  CREATE TABLE bindings (
    tenant_id      text NOT NULL,
    aggregate_type text NOT NULL,
    reducer_id     text NOT NULL,
    class_name     text NOT NULL,
    binding_id     text NOT NULL,
    bound_at       timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, aggregate_type)
  );
  -- One row per aggregate: the latest state, written in the append's own transaction.
  CREATE TABLE snapshots (
    tenant_id      text NOT NULL,
    aggregate_id   text NOT NULL,
    aggregate_type text NOT NULL,
    binding_id     text NOT NULL,
    version        bigint NOT NULL,
    state          text NOT NULL,
    failed_version bigint,
    error          text,
    updated_at     timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, aggregate_id)
  );
  CREATE INDEX streams_by_type ON streams (tenant_id, aggregate_type, aggregate_id);
  `,
  `
  CREATE TABLE projections (
    tenant_id       text NOT NULL,
    projection_id   text NOT NULL,
    name            text NOT NULL,
    active_version  text,
    pending_version text,
    created_at      bigint NOT NULL,
    PRIMARY KEY (tenant_id, projection_id),
    UNIQUE (tenant_id, name)
  );
  CREATE TABLE projection_versions (
    tenant_id       text NOT NULL,
    version_id      text NOT NULL,
    projection_id   text NOT NULL,
    class_name      text NOT NULL,
    target_position bigint NOT NULL,
    routed_position bigint NOT NULL DEFAULT 0,
    caught_up_at    bigint,
    created_at      bigint NOT NULL,
    PRIMARY KEY (tenant_id, version_id)
  );
  -- Each lane's order lives here: routed events waiting for their key's lane.
  CREATE TABLE lane_inbox (
    tenant_id  text NOT NULL,
    version_id text NOT NULL,
    state_key  text NOT NULL,
    position   bigint NOT NULL,
    PRIMARY KEY (tenant_id, version_id, state_key, position)
  );
  CREATE INDEX lane_inbox_by_position ON lane_inbox (tenant_id, version_id, position);
  CREATE TABLE lanes (
    tenant_id        text NOT NULL,
    version_id       text NOT NULL,
    state_key        text NOT NULL,
    state            text,
    applied_position bigint NOT NULL DEFAULT 0,
    updated_at       bigint,
    held_position    bigint,
    held_error       text,
    attempts         bigint NOT NULL DEFAULT 0,
    -- Lease: with several instances, one lane runs in one instance at a time.
    lease_owner      text,
    lease_until      bigint,
    PRIMARY KEY (tenant_id, version_id, state_key)
  );
  `,
  notificationsMigration('bigint'),
  `
  -- Per-tenant limit overrides (src/quotas); a tenant without a row has the configured defaults.
  CREATE TABLE tenant_limits (
    tenant_id  text PRIMARY KEY REFERENCES tenants(tenant_id),
    limits     text NOT NULL,
    updated_at timestamptz NOT NULL
  );
  `,
  WEBHOOK_TURNS_MIGRATION,
  WEBHOOK_KEY_HEADS_MIGRATION,
  sharedStatesMigration('postgres'),
  webhookSuspensionsMigration('bigint'),
  droppedVersionsMigration('bigint'),
  webhookUrlMigration('postgres'),
  NOTIFICATION_TRACE_MIGRATION,
  uploadClaimMigration('bigint'),
  idempotencyKeysMigration('bigint'),
  apiKeyScopesMigration('timestamptz'),
  EVENT_TRACE_MIGRATION,
  EVENT_LOG_FILTER_MIGRATION,
  erasureMigration('postgres'),
  eventWebhooksMigration('bigint'),
];
