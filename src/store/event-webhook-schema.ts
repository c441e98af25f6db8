/**
 * Event webhooks (issue 24, item 2): a tenant's event log delivered to a URL. One row per
 * subscription holds everything a delivery needs: the cursor (`delivered_position`: every matching
 * event at or below it is delivered or dead-lettered), the failed attempts of the event after it,
 * when the next attempt is due, and the claim (`claim_owner`/`claim_until`, epoch ms as the lanes'
 * leases) that lets one instance at a time deliver it. There is no row per delivery: the log is the
 * queue. Dead letters get a row each (kept until the subscription is deleted or a replay covers them).
 * Same text on both stores but the integer type.
 */
export function eventWebhooksMigration(int: 'INTEGER' | 'bigint'): string {
  return `
  CREATE TABLE event_webhooks (
    tenant_id          TEXT NOT NULL,
    webhook_id         TEXT NOT NULL,
    name               TEXT,
    url                TEXT NOT NULL,
    -- JSON arrays of the types delivered; NULL: every type.
    aggregate_types    TEXT,
    event_types        TEXT,
    status             TEXT NOT NULL,
    delivered_position ${int} NOT NULL,
    attempts           ${int} NOT NULL,
    next_attempt_at    ${int} NOT NULL,
    last_error         TEXT,
    last_error_at      ${int},
    consecutive_dead   ${int} NOT NULL,
    suspended_at       ${int},
    suspended_reason   TEXT,
    created_at         ${int} NOT NULL,
    claim_owner        TEXT,
    claim_until        ${int},
    PRIMARY KEY (tenant_id, webhook_id)
  );
  -- The dispatchers' poll: active subscriptions by when they are due (all tenants, one index range).
  CREATE INDEX event_webhooks_due ON event_webhooks (next_attempt_at) WHERE status = 'active';
  CREATE TABLE event_webhook_dead_letters (
    tenant_id  TEXT NOT NULL,
    webhook_id TEXT NOT NULL,
    position   ${int} NOT NULL,
    event_id   TEXT NOT NULL,
    attempts   ${int} NOT NULL,
    last_error TEXT,
    dead_at    ${int} NOT NULL,
    PRIMARY KEY (tenant_id, webhook_id, position)
  );
  `;
}

/**
 * Issue 28: an event webhook's DCB query (docs/dcb.md), JSON text of `{"items":[…]}` as validated at
 * creation, AND-ed with the type lists; NULL (every subscription made before): no query filter.
 */
export const EVENT_WEBHOOK_QUERY_MIGRATION = `
  ALTER TABLE event_webhooks ADD COLUMN query TEXT;
  `;
