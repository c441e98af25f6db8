/**
 * Erasure (DELETE /events/{aggregateId}, docs: README "Erasure"). An erased aggregate keeps its
 * events as tombstones (eventId, version, position, eventType, timestamp; `data` '{}', `metadata`
 * NULL) marked by `events.erased_at`, and its stream row says when and up to which version it was
 * erased and where the `$erased` system event of that erasure stands.
 *
 * `erased_version` freezes the stream: the CHECK refuses any write that moves the version of an
 * erased stream. An append planned on a version read (or cached) before the erasure committed
 * therefore fails inside its own statement (PostgreSQL: the ON CONFLICT update of the streams row
 * sees the latest committed row, whatever the statement's snapshot), so nothing can be appended
 * after an erasure on any instance; the append path then reads again under the tenant's lock and
 * answers AGGREGATE_ERASED.
 *
 * `notifications_by_aggregate`: an erasure replaces the state of the notifications its aggregate's
 * events caused, found by this index instead of a scan of the tenant's whole log.
 */
export function erasureMigration(store: 'sqlite' | 'postgres'): string {
  if (store === 'sqlite') {
    return `
  ALTER TABLE events ADD COLUMN erased_at INTEGER;
  ALTER TABLE streams ADD COLUMN erased_at INTEGER;
  ALTER TABLE streams ADD COLUMN erased_position INTEGER;
  ALTER TABLE streams ADD COLUMN erased_version INTEGER CONSTRAINT streams_erased_frozen CHECK (erased_version IS NULL OR version = erased_version);
  CREATE INDEX notifications_by_aggregate ON notifications (tenant_id, aggregate_id);
  `;
  }
  return `
  ALTER TABLE events ADD COLUMN erased_at timestamptz;
  ALTER TABLE streams ADD COLUMN erased_at timestamptz;
  ALTER TABLE streams ADD COLUMN erased_position bigint;
  ALTER TABLE streams ADD COLUMN erased_version bigint;
  ALTER TABLE streams ADD CONSTRAINT streams_erased_frozen CHECK (erased_version IS NULL OR version = erased_version);
  CREATE INDEX notifications_by_aggregate ON notifications (tenant_id, aggregate_id);
  `;
}
