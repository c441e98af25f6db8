/**
 * The notification and webhook tables. The same shape on both stores; only the integer type
 * differs, so the migration text is made here once for each adapter's list.
 */
export function notificationsMigration(int: 'INTEGER' | 'bigint'): string {
  return `
  -- Per projection: the last sequence handed out (gap-free counter, locked by the transaction
  -- that stores a state change), the highest one removed by retention, and how far the
  -- webhook dispatcher has turned notifications into deliveries.
  CREATE TABLE notification_heads (
    tenant_id        TEXT NOT NULL,
    projection_id    TEXT NOT NULL,
    last_sequence    ${int} NOT NULL DEFAULT 0,
    pruned_sequence  ${int} NOT NULL DEFAULT 0,
    webhook_sequence ${int} NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, projection_id)
  );
  INSERT INTO notification_heads (tenant_id, projection_id) SELECT tenant_id, projection_id FROM projections;
  CREATE TABLE notifications (
    tenant_id      TEXT NOT NULL,
    projection_id  TEXT NOT NULL,
    sequence       ${int} NOT NULL,
    position       ${int} NOT NULL,
    state_key      TEXT NOT NULL,
    aggregate_id   TEXT NOT NULL,
    aggregate_type TEXT NOT NULL,
    version        ${int} NOT NULL,
    state          TEXT NOT NULL,
    timestamp      ${int} NOT NULL,
    created_at     ${int} NOT NULL,
    PRIMARY KEY (tenant_id, projection_id, sequence)
  );
  ALTER TABLE projections ADD COLUMN notify_config TEXT;
  -- scope '' is the tenant's shared secret; otherwise a projectionId with an isolated secret.
  -- Secrets are stored encrypted (SecretCipher); the previous one signs too until previous_until.
  CREATE TABLE webhook_secrets (
    tenant_id       TEXT NOT NULL,
    scope           TEXT NOT NULL,
    secret          TEXT NOT NULL,
    previous_secret TEXT,
    previous_until  ${int},
    rotated_at      ${int} NOT NULL,
    PRIMARY KEY (tenant_id, scope)
  );
  CREATE TABLE webhook_deliveries (
    tenant_id       TEXT NOT NULL,
    projection_id   TEXT NOT NULL,
    sequence        ${int} NOT NULL,
    state_key       TEXT NOT NULL,
    status          TEXT NOT NULL,
    attempts        ${int} NOT NULL DEFAULT 0,
    next_attempt_at ${int} NOT NULL,
    last_error      TEXT,
    created_at      ${int} NOT NULL,
    updated_at      ${int} NOT NULL,
    PRIMARY KEY (tenant_id, projection_id, sequence)
  );
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
  CREATE INDEX webhook_deliveries_by_key ON webhook_deliveries (tenant_id, projection_id, state_key, sequence);
  `;
}

/**
 * The webhook dispatcher serves tenants in turn: it walks the tenants with pending deliveries by
 * this index (one seek each) and reads each one's due deliveries from it. Same text on both stores.
 */
export const WEBHOOK_TURNS_MIGRATION = `
  CREATE INDEX webhook_deliveries_by_tenant ON webhook_deliveries (status, tenant_id, next_attempt_at);
  `;
