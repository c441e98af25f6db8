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
 * The one notification setting the store's own queries ask (does the projection have a webhook:
 * webhook backlog, retention pins) as a column, instead of matching inside notify_config's text,
 * which notifications/ alone makes and parses. Filled from that text once, here.
 */
export function webhookUrlMigration(dialect: 'sqlite' | 'postgres'): string {
  const fromText = dialect === 'sqlite' ? "json_extract(notify_config, '$.webhookUrl')" : "CAST(notify_config AS jsonb) ->> 'webhookUrl'";
  return `
  ALTER TABLE projections ADD COLUMN webhook_url TEXT;
  UPDATE projections SET webhook_url = ${fromText} WHERE notify_config IS NOT NULL;
  `;
}

/**
 * The webhook dispatcher serves tenants in turn: it walks the tenants with pending deliveries by
 * this index (one seek each) and reads each one's due deliveries from it. Same text on both stores.
 */
export const WEBHOOK_TURNS_MIGRATION = `
  CREATE INDEX webhook_deliveries_by_tenant ON webhook_deliveries (status, tenant_id, next_attempt_at, sequence);
  `;

/**
 * A pending delivery is stored as 'pending' only while it is the first undelivered one of its key
 * (the head, which may be attempted); the ones behind it are 'waiting' (shown as pending). The due
 * query then walks webhook_deliveries_by_tenant and stops after its limit, instead of stepping over
 * every delivery queued behind a failing head (O(backlog) per tick). Heads move along the key by
 * webhook_deliveries_key_order (two index probes). Same text on both stores.
 */
export const WEBHOOK_KEY_HEADS_MIGRATION = `
  CREATE INDEX webhook_deliveries_key_order ON webhook_deliveries (tenant_id, projection_id, state_key, status, sequence);
  UPDATE webhook_deliveries SET status = 'waiting'
  WHERE status = 'pending' AND EXISTS (
    SELECT 1 FROM webhook_deliveries e
    WHERE e.tenant_id = webhook_deliveries.tenant_id AND e.projection_id = webhook_deliveries.projection_id
      AND e.state_key = webhook_deliveries.state_key AND e.status = 'pending' AND e.sequence < webhook_deliveries.sequence);
  DROP INDEX webhook_deliveries_by_key;
  `;

/**
 * A notification refers to its state instead of carrying it: identical state texts of a tenant
 * are stored once in notification_states (by their SHA-256), so 200 projections that give the same
 * state for an event, or a projection whose state did not change, store it once. The text is kept
 * byte for byte and joined back on read: every channel's message is unchanged. Rows logged before
 * this migration keep their own state row each (digest 'legacy:…', never a SHA-256's form).
 * `notifications_by_state` lets retention remove a state once nothing refers to it.
 */
export function sharedStatesMigration(store: 'sqlite' | 'postgres'): string {
  const pg = store === 'postgres';
  return `
  CREATE TABLE notification_states (
    state_id  ${pg ? 'bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY' : 'INTEGER PRIMARY KEY'},
    tenant_id TEXT NOT NULL,
    digest    TEXT NOT NULL,
    state     TEXT NOT NULL
  );
  CREATE UNIQUE INDEX notification_states_by_digest ON notification_states (tenant_id, digest);
  ALTER TABLE notifications ADD COLUMN state_id ${pg ? 'bigint' : 'INTEGER'};
  INSERT INTO notification_states (tenant_id, digest, state)
    SELECT tenant_id, 'legacy:' || projection_id || ':' || CAST(sequence AS TEXT), state FROM notifications;
  UPDATE notifications SET state_id = (SELECT s.state_id FROM notification_states s
    WHERE s.tenant_id = notifications.tenant_id AND s.digest = 'legacy:' || notifications.projection_id || ':' || CAST(notifications.sequence AS TEXT));
  ALTER TABLE notifications DROP COLUMN state;
  CREATE INDEX notifications_by_state ON notifications (state_id);
  ${
    // PostgreSQL: a lane referring to a state takes a key-share lock on it (the foreign key), so
    // retention cannot remove a state between a lane finding it and its commit. SQLite writes one
    // transaction at a time: nothing can come between.
    pg
      ? `ALTER TABLE notifications ALTER COLUMN state_id SET NOT NULL;
  ALTER TABLE notifications ADD CONSTRAINT notifications_state_fk FOREIGN KEY (state_id) REFERENCES notification_states (state_id);`
      : ''
  }
  `;
}

/**
 * The trace a notification continues (a W3C traceparent: the caller's stored with its event, or with
 * tracing on the service's span; NULL when neither, see event-trace-schema.ts): its
 * webhook attempts send it on as their `traceparent`, and stream messages carry its trace id, however
 * much later they happen. Same text on both stores.
 */
export const NOTIFICATION_TRACE_MIGRATION = `
  ALTER TABLE notifications ADD COLUMN trace_parent TEXT;
  `;
