import { ddlTypes } from './sql-dialect';
import { SqlDialect } from './sql-runner';

/**
 * Tags (DCB, docs/dcb.md, issue 28). An event's tags are kept twice, both written in the append's
 * own transaction (PostgreSQL: its one statement):
 *  - `events.tags`: the JSON array as appended (order kept, exact text), NULL when the event has
 *    none, so every read of events gives them back without a join; events stored before this
 *    migration have none.
 *  - `event_tags`: one row per (event, tag), the index a read or a condition by tag drives from: a
 *    tag's events after a position are one range of its primary key, in position order, so a tag
 *    query reads what it returns, however large the tenant's log.
 * An erasure removes both (the tags often carry personal data): the erased events match no query.
 */
export function eventTagsMigration(dialect: SqlDialect): string {
  const t = ddlTypes(dialect);
  return `
  ALTER TABLE events ADD COLUMN tags ${t.text};
  CREATE TABLE event_tags (
    tenant_id ${t.text} NOT NULL,
    tag       ${t.text} NOT NULL,
    position  ${t.int} NOT NULL,
    PRIMARY KEY (tenant_id, tag, position)
  )${t.withoutRowid};
  `;
}

/** At most this many tags on one event, and in one query item (docs/dcb.md). */
export const MAX_TAGS = 20;
/** A tag's length in characters, at least 1 (docs/dcb.md). */
export const MAX_TAG_LENGTH = 200;
