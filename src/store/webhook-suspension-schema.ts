/**
 * Webhook endpoints past their tenant's pendingDeliveries limit (issue 15). A row exists while the
 * endpoint is suspended: no deliveries are made for it, its pending ones are gone (the log holds
 * them), and retention no longer keeps the log for it. Same text on both stores but the integer type.
 */
export function webhookSuspensionsMigration(int: 'INTEGER' | 'bigint'): string {
  return `
  CREATE TABLE webhook_suspensions (
    tenant_id       TEXT NOT NULL,
    projection_id   TEXT NOT NULL,
    -- The oldest notification not yet delivered when it was suspended: a resume starts there.
    resume_sequence ${int} NOT NULL,
    reason          TEXT NOT NULL,
    suspended_at    ${int} NOT NULL,
    PRIMARY KEY (tenant_id, projection_id)
  );
  -- A projection's pending (or dead) deliveries without reading its delivered ones: the pending
  -- count against the limit, the oldest pending, dead rows a replay would take.
  CREATE INDEX webhook_deliveries_by_status ON webhook_deliveries (tenant_id, projection_id, status, sequence);
  `;
}
