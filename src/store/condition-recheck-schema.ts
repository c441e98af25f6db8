import { SqlDialect } from './sql-runner';

/**
 * An append condition decided inside PostgreSQL's one-statement group commit
 * (postgres-event-log-statements.ts, `rc`). That statement's snapshot is taken before it waits for
 * the tenants' head locks, so it cannot see an event committed while it waited; this function can:
 * it is VOLATILE, and under READ COMMITTED each statement it runs takes a snapshot of its own, after
 * the caller holds the locks. It answers whether any of `items` — the conditions' query items,
 * each `{t: tenant, a: after, g: tags, y: types}` — matches an event stored after `a` and up to its
 * tenant's locked head (`heads`, by tenant). Events past the head are the statement's own and were
 * checked before it was sent.
 *
 * Static SQL, so PL/pgSQL keeps its plan per connection (it runs while the heads are locked: it
 * must be cheap). Each item reads as a read by query does (event-query-sql.ts): from its first
 * tag's range of event_tags, its other tags and its types probed on that position; with only types,
 * one range of events_by_event_type per type; with neither, the plain log. Erased events match
 * nothing (their tag rows are gone; the other two skip them). Each inner EXISTS is fenced (`OFFSET 0`,
 * event-query-sql.ts `probeFence`): unfenced, the generic plan PL/pgSQL settles on hashed every event
 * since the read position to answer a types-only item (100,000 events: 35 ms under the head lock,
 * 0.25 ms fenced) instead of one range of events_by_event_type per type.
 *
 * SQLite needs none of this: its appends run one at a time inside the writer's transaction, where
 * the conditions are read directly. Its migration is a statement that changes nothing, so that the
 * two stores keep one numbering of migrations.
 */
export function conditionRecheckMigration(dialect: SqlDialect): string {
  if (dialect === 'sqlite') return 'SELECT 1;';
  return `
  CREATE FUNCTION es_condition_raced(items json, heads json) RETURNS boolean
  LANGUAGE plpgsql VOLATILE AS $fn$
  BEGIN
    IF items IS NULL OR heads IS NULL THEN
      RETURN false;
    END IF;
    RETURN EXISTS (
      SELECT 1
      FROM json_to_recordset(items) AS c(t text, a bigint, g text[], y text[])
      CROSS JOIN LATERAL (SELECT (heads ->> c.t)::bigint AS head) AS h
      WHERE CASE
        WHEN cardinality(c.g) > 0 THEN EXISTS (
          SELECT 1 FROM event_tags x
          WHERE x.tenant_id = c.t AND x.tag = c.g[1] AND x.position > c.a AND x.position <= h.head
            AND NOT EXISTS (
              SELECT 1 FROM unnest(c.g) AS o(tag)
              WHERE NOT EXISTS (SELECT 1 FROM event_tags z WHERE z.tenant_id = c.t AND z.tag = o.tag AND z.position = x.position OFFSET 0))
            AND (cardinality(c.y) = 0
                 OR EXISTS (SELECT 1 FROM events e WHERE e.tenant_id = c.t AND e.position = x.position AND e.event_type = ANY (c.y) OFFSET 0)))
        WHEN cardinality(c.y) > 0 THEN EXISTS (
          SELECT 1 FROM unnest(c.y) AS ty(event_type)
          WHERE EXISTS (
            SELECT 1 FROM events e
            WHERE e.tenant_id = c.t AND e.event_type = ty.event_type AND e.position > c.a AND e.position <= h.head
              AND e.erased_at IS NULL OFFSET 0))
        ELSE EXISTS (
          SELECT 1 FROM events e WHERE e.tenant_id = c.t AND e.position > c.a AND e.position <= h.head AND e.erased_at IS NULL)
      END
    );
  END
  $fn$;
  `;
}
