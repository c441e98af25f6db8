import { EVENT_TRACE_MIGRATION } from './event-trace-schema';
import {
  notificationsMigration,
  WEBHOOK_TURNS_MIGRATION,
  WEBHOOK_KEY_HEADS_MIGRATION,
  sharedStatesMigration,
  webhookUrlMigration,
  NOTIFICATION_TRACE_MIGRATION,
} from './notification-schema';
import { webhookSuspensionsMigration } from './webhook-suspension-schema';
import { droppedVersionsMigration } from './projection-schema';
import { EVENT_LOG_FILTER_MIGRATION } from './event-log-schema';
import { UPLOAD_DIAGNOSTICS_MIGRATION, uploadClaimMigration } from './upload-schema';
import { idempotencyKeysMigration } from './idempotency-schema';
import { apiKeyScopesMigration } from './api-key-schema';
import { erasureMigration } from './erasure-schema';
import { EVENT_WEBHOOK_QUERY_MIGRATION, eventWebhooksMigration } from './event-webhook-schema';
import { FAILED_STATES_MIGRATION } from './failed-states-schema';
import { LANE_HELD_FAILURE_MIGRATION } from './lanes/lane-failure-schema';
import { eventTagsMigration } from './event-tags-schema';
import { conditionRecheckMigration } from './condition-recheck-schema';
import { ddlTypes } from './sql-dialect';
import { SqlDialect } from './sql-runner';

/**
 * The schema's migrations, each written once for both stores: the column types come from
 * ddlTypes (sql-dialect.ts); the few statements that differ otherwise say why where they do.
 * Ordered and append-only: a migration's version is its place in the list (schema_migrations
 * records it), so one once shipped is never edited, only followed (migrations.spec.ts holds the
 * shipped texts' digests).
 */
export function migrations(dialect: SqlDialect): string[] {
  const t = ddlTypes(dialect);
  const pg = dialect === 'postgres';
  return [
    `
  CREATE TABLE tenants (
    tenant_id  ${t.text} PRIMARY KEY,
    name       ${t.text} NOT NULL,
    created_at ${t.time} NOT NULL
  );
  ${
    // The comment was worded per store when it shipped; the text stays as it ran.
    pg
      ? `-- The per-tenant counter row. An append locks it, so commits of one tenant are ordered and a
  -- reader never sees position P+1 before P; a rollback undoes the increment, so no holes.`
      : '-- The per-tenant counter row: positions are drawn from it inside the append transaction.'
  }
  CREATE TABLE tenant_heads (
    tenant_id ${t.text} PRIMARY KEY,
    position  ${t.int} NOT NULL
  );
  CREATE TABLE api_keys (
    key_id     ${t.text} PRIMARY KEY,
    tenant_id  ${t.text} NOT NULL REFERENCES tenants(tenant_id),
    key_hash   ${t.text} NOT NULL UNIQUE,
    created_at ${t.time} NOT NULL,
    revoked_at ${t.time}
  );
  CREATE TABLE streams (
    tenant_id      ${t.text} NOT NULL,
    aggregate_id   ${t.text} NOT NULL,
    aggregate_type ${t.text} NOT NULL,
    version        ${t.int} NOT NULL,
    PRIMARY KEY (tenant_id, aggregate_id)
  )${t.withoutRowid};
  CREATE TABLE events (
    tenant_id      ${t.text} NOT NULL,
    position       ${t.int} NOT NULL,
    aggregate_id   ${t.text} NOT NULL,
    version        ${t.int} NOT NULL,
    event_id       ${t.uuid} NOT NULL,
    aggregate_type ${t.text} NOT NULL,
    event_type     ${t.text} NOT NULL,
    data           ${t.text} NOT NULL,
    metadata       ${t.text},
    correlation_id ${t.text},
    causation_id   ${t.text},
    created_at     ${t.time} NOT NULL,
    ${
      // One rule, two spellings as shipped: a table constraint on PostgreSQL; a named unique
      // index on SQLite (a WITHOUT ROWID table keeps its primary key as the clustered index).
      pg
        ? `PRIMARY KEY (tenant_id, position),
    UNIQUE (tenant_id, aggregate_id, version)
  );`
        : `PRIMARY KEY (tenant_id, position)
  ) WITHOUT ROWID;
  CREATE UNIQUE INDEX events_by_stream ON events (tenant_id, aggregate_id, version);`
    }
  `,
    `
  CREATE TABLE uploads (
    upload_id         ${t.text} NOT NULL,
    tenant_id         ${t.text} NOT NULL,
    kind              ${t.text} NOT NULL,
    status            ${t.text} NOT NULL,
    sources           ${t.text} NOT NULL,
    meta              ${t.text} NOT NULL,
    discovered        ${t.text},
    compilation_error ${t.text},
    assembly          ${t.bytes},
    assembly_sha256   ${t.text},
    created_at        ${t.time} NOT NULL,
    compiled_at       ${t.time},
    PRIMARY KEY (tenant_id, upload_id)
  );
  CREATE INDEX uploads_pending ON uploads (created_at) WHERE status = 'pending';
  `,
    `
  CREATE TABLE bindings (
    tenant_id      ${t.text} NOT NULL,
    aggregate_type ${t.text} NOT NULL,
    reducer_id     ${t.text} NOT NULL,
    class_name     ${t.text} NOT NULL,
    binding_id     ${t.text} NOT NULL,
    bound_at       ${t.time} NOT NULL,
    PRIMARY KEY (tenant_id, aggregate_type)
  );
  -- One row per aggregate: the latest state, written in the append's own transaction.
  CREATE TABLE snapshots (
    tenant_id      ${t.text} NOT NULL,
    aggregate_id   ${t.text} NOT NULL,
    aggregate_type ${t.text} NOT NULL,
    binding_id     ${t.text} NOT NULL,
    version        ${t.int} NOT NULL,
    state          ${t.text} NOT NULL,
    failed_version ${t.int},
    error          ${t.text},
    updated_at     ${t.time} NOT NULL,
    PRIMARY KEY (tenant_id, aggregate_id)
  )${t.withoutRowid};
  CREATE INDEX streams_by_type ON streams (tenant_id, aggregate_type, aggregate_id);
  `,
    `
  CREATE TABLE projections (
    tenant_id       ${t.text} NOT NULL,
    projection_id   ${t.text} NOT NULL,
    name            ${t.text} NOT NULL,
    active_version  ${t.text},
    pending_version ${t.text},
    created_at      ${t.int} NOT NULL,
    PRIMARY KEY (tenant_id, projection_id),
    UNIQUE (tenant_id, name)
  );
  CREATE TABLE projection_versions (
    tenant_id       ${t.text} NOT NULL,
    version_id      ${t.text} NOT NULL,
    projection_id   ${t.text} NOT NULL,
    class_name      ${t.text} NOT NULL,
    target_position ${t.int} NOT NULL,
    routed_position ${t.int} NOT NULL DEFAULT 0,
    caught_up_at    ${t.int},
    created_at      ${t.int} NOT NULL,
    PRIMARY KEY (tenant_id, version_id)
  );
  -- Each lane's order lives here: routed events waiting for their key's lane.
  CREATE TABLE lane_inbox (
    tenant_id  ${t.text} NOT NULL,
    version_id ${t.text} NOT NULL,
    state_key  ${t.text} NOT NULL,
    position   ${t.int} NOT NULL,
    PRIMARY KEY (tenant_id, version_id, state_key, position)
  );
  CREATE INDEX lane_inbox_by_position ON lane_inbox (tenant_id, version_id, position);
  CREATE TABLE lanes (
    tenant_id        ${t.text} NOT NULL,
    version_id       ${t.text} NOT NULL,
    state_key        ${t.text} NOT NULL,
    state            ${t.text},
    applied_position ${t.int} NOT NULL DEFAULT 0,
    updated_at       ${t.int},
    held_position    ${t.int},
    held_error       ${t.text},
    attempts         ${t.int} NOT NULL DEFAULT 0,
    -- Lease: with several instances, one lane runs in one instance at a time.
    lease_owner      ${t.text},
    lease_until      ${t.int},
    PRIMARY KEY (tenant_id, version_id, state_key)
  );
  `,
    notificationsMigration(t.int),
    `
  -- Per-tenant limit overrides (src/quotas); a tenant without a row has the configured defaults.
  CREATE TABLE tenant_limits (
    tenant_id  ${t.text} PRIMARY KEY REFERENCES tenants(tenant_id),
    limits     ${t.text} NOT NULL,
    updated_at ${t.time} NOT NULL
  );
  `,
    WEBHOOK_TURNS_MIGRATION,
    WEBHOOK_KEY_HEADS_MIGRATION,
    sharedStatesMigration(dialect),
    webhookSuspensionsMigration(t.int),
    droppedVersionsMigration(t.int),
    webhookUrlMigration(dialect),
    NOTIFICATION_TRACE_MIGRATION,
    uploadClaimMigration(t.int),
    idempotencyKeysMigration(t.int),
    apiKeyScopesMigration(t.time),
    EVENT_TRACE_MIGRATION,
    EVENT_LOG_FILTER_MIGRATION,
    erasureMigration(dialect),
    eventWebhooksMigration(t.int),
    FAILED_STATES_MIGRATION,
    UPLOAD_DIAGNOSTICS_MIGRATION,
    LANE_HELD_FAILURE_MIGRATION,
    eventTagsMigration(dialect),
    EVENT_WEBHOOK_QUERY_MIGRATION,
    conditionRecheckMigration(dialect),
  ];
}
