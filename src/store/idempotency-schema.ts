/**
 * Idempotency keys of appends (issue 24 item 3; README "Retrying appends safely"). A row is written
 * in the same transaction as the events it answers for, so "the events are stored" and "the key is
 * remembered" are one fact: a crash between the commit and the response loses neither. The row
 * names the events by their position range (events are never moved, only erased to tombstones that
 * keep their ids, versions and positions), so a replay reads them back and answers the same body.
 * `outcome` is the part of the answer that is not in the log (a reducer's state, or its error).
 * Same text on both stores but the integer type (epoch ms, as the lanes' leases).
 */
export function idempotencyKeysMigration(int: 'INTEGER' | 'bigint'): string {
  return `
  CREATE TABLE idempotency_keys (
    tenant_id      TEXT NOT NULL,
    idem_key       TEXT NOT NULL,
    -- SHA-256 (hex) of the route and the request body: "the same request".
    request_hash   TEXT NOT NULL,
    first_position ${int} NOT NULL,
    last_position  ${int} NOT NULL,
    outcome        TEXT,
    created_at     ${int} NOT NULL,
    PRIMARY KEY (tenant_id, idem_key)
  );
  -- The expiry sweep: the oldest rows first, without reading the rest.
  CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
  -- Erasure: the keys that answered for an aggregate's appends (a request appends to one aggregate,
  -- so its first position is one of that aggregate's events) lose the reducer state they kept.
  CREATE INDEX idempotency_keys_by_position ON idempotency_keys (tenant_id, first_position);
  `;
}
