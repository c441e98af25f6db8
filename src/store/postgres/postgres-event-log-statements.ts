import { REMEMBERED_KEY_COLUMNS } from '../idempotency-rows';
import { BatchCondition, distinct } from '../event-query-sql';

/** The event log's statements on PostgreSQL (PostgresEventLog): the group commit and what it reads and locks. */
// Named statements: parsed once per connection, then only bound and executed.
export const READ_STREAMS = {
  name: 'es_streams',
  text: `SELECT s.tenant_id, s.aggregate_id, s.aggregate_type, s.version, s.erased_at
         FROM streams s JOIN unnest($1::text[], $2::text[]) AS k(t, a) ON s.tenant_id = k.t AND s.aggregate_id = k.a`,
};

/** Which of the group commit's statements a batch needs: only what it carries is sent and run. */
export interface AppendShape {
  /** Some event has tags: their rows are inserted (event_tags). */
  tags: boolean;
  /** Some accepted request has a condition: it is decided again once the heads are locked (below). */
  conditions: boolean;
}

/**
 * A whole group commit in one statement, so one round trip (autocommit) per batch:
 *  - chk: every stream the plan touched is still at the version (and type) the plan assumed;
 *  - h: lock the tenants' counter rows, in tenant order (writers never deadlock), only if chk passed;
 *  - rc (conditions only): whether an event matching a condition was stored up to the locked heads;
 *  - insert events (and their tag rows, event-tags-schema.ts) at counter + offset, upsert streams, advance counters;
 *  - remember the idempotency keys of accepted requests (plain INSERT: a key the store already has —
 *    the optimistic plan does not read them, or another instance took it since — fails the statement
 *    with a unique violation, and the locked retry below reads that key and replays it).
 * The statement's snapshot predates the lock wait, so a writer on another instance that committed
 * in between is caught by the (tenant, aggregate, version) unique key instead: the caller retries.
 * A query match has no such key, so `rc` reads with a snapshot of its own, taken after `h` holds the
 * locks: es_condition_raced (condition-recheck-schema.ts) is VOLATILE, and under READ COMMITTED each
 * statement it runs sees every commit before it. No event of these tenants can commit after that
 * (every event is stored under its tenant's head lock), so what it does not find cannot exist. On a
 * match nothing is written (`w` is empty) and the caller decides the batch again under the locks.
 *
 * Parameters: $1 checks, $2 tenants, $3 events, $4 head increments, $5 streams, $6 snapshots,
 * $7 idempotency keys, then the tag rows (tags), then the conditions' items (conditions).
 */
export function appendStatement(shape: AppendShape): { name: string; text: string } {
  const key = Number(shape.tags) * 2 + Number(shape.conditions);
  return (APPEND_STATEMENTS[key] ??= appendStatementText(shape));
}

/** The four shapes' statements, each written once (pg compares a named statement's text on every use). */
const APPEND_STATEMENTS: { name: string; text: string }[] = [];

function appendStatementText(shape: AppendShape): { name: string; text: string } {
  const tagRows = shape.tags ? '$8' : '';
  const conditionItems = shape.conditions ? (shape.tags ? '$9' : '$8') : '';
  // The writes join `w`: the locked heads, or none when a condition met an event (conditions only).
  const w = shape.conditions ? 'w' : 'h';
  return {
    name: `es_append${shape.tags ? '_t' : ''}${shape.conditions ? '_c' : ''}`,
    // Rows travel as one JSON document per set: JSON.stringify is native, while pg's array
    // parameters are escaped element by element in JavaScript (it showed in profiles).
    text: `
  WITH chk AS (
    SELECT count(*) AS stale
    FROM json_to_recordset($1::json) AS c(t text, a text, v bigint, y text)
    LEFT JOIN streams s ON s.tenant_id = c.t AND s.aggregate_id = c.a
    WHERE coalesce(s.version, 0) <> c.v OR (c.v > 0 AND s.aggregate_type <> c.y)
  ), h AS (
    SELECT tenant_id, position FROM tenant_heads
    WHERE tenant_id = ANY($2::text[]) AND (SELECT stale FROM chk) = 0
    ORDER BY tenant_id FOR UPDATE
  ),${
    shape.conditions
      ? ` rc AS (
    -- The aggregate reads every row of h first: the heads are locked before the function runs.
    SELECT es_condition_raced(${conditionItems}::json, json_object_agg(tenant_id, position)) AS raced FROM h
  ), w AS (
    SELECT tenant_id, position FROM h WHERE NOT coalesce((SELECT raced FROM rc), false)
  ),`
      : ''
  } ins AS (
    INSERT INTO events (tenant_id, position, aggregate_id, version, event_id, aggregate_type, event_type,
                        data, metadata, correlation_id, causation_id, created_at, trace_parent, trace_state, tags)
    SELECT x.t, ${w}.position + x.o, x.a, x.v, x.i, x.y, x.e, x.d, x.m, x.c, x.k, to_timestamp(x.ts / 1000.0), x.tp, x.tt, x.g
    FROM json_to_recordset($3::json) AS x(t text, o bigint, a text, v bigint, i uuid, y text, e text, d text, m text, c text, k text, ts bigint,
                                          tp text, tt text, g text)
    JOIN ${w} ON ${w}.tenant_id = x.t
    RETURNING 1
  ),${
    shape.tags
      ? ` tg AS (
    INSERT INTO event_tags (tenant_id, tag, position)
    SELECT x.t, x.g, ${w}.position + x.o FROM json_to_recordset(${tagRows}::json) AS x(t text, o bigint, g text)
    JOIN ${w} ON ${w}.tenant_id = x.t
    RETURNING 1
  ),`
      : ''
  } st AS (
    INSERT INTO streams (tenant_id, aggregate_id, aggregate_type, version)
    SELECT z.t, z.a, z.y, z.v FROM json_to_recordset($5::json) AS z(t text, a text, y text, v bigint)
    WHERE EXISTS (SELECT 1 FROM ${w})
    ON CONFLICT (tenant_id, aggregate_id) DO UPDATE SET version = EXCLUDED.version
    RETURNING 1
  ), sn AS (
    INSERT INTO snapshots (tenant_id, aggregate_id, aggregate_type, binding_id, version, state, failed_version, error, updated_at)
    SELECT q.t, q.a, q.y, q.b, q.v, q.s, q.fv, q.er, to_timestamp(q.ts / 1000.0)
    FROM json_to_recordset($6::json) AS q(t text, a text, y text, b text, v bigint, s text, fv bigint, er text, ts bigint)
    WHERE EXISTS (SELECT 1 FROM ${w})
    ON CONFLICT (tenant_id, aggregate_id) DO UPDATE SET binding_id = EXCLUDED.binding_id, version = EXCLUDED.version,
      state = EXCLUDED.state, failed_version = EXCLUDED.failed_version, error = EXCLUDED.error, updated_at = EXCLUDED.updated_at
    RETURNING 1
  ), ik AS (
    INSERT INTO idempotency_keys (tenant_id, idem_key, request_hash, first_position, last_position, outcome, created_at)
    SELECT x.t, x.key, x.h, ${w}.position + x.f, ${w}.position + x.l, x.out, x.ts
    FROM json_to_recordset($7::json) AS x(t text, key text, h text, f bigint, l bigint, out text, ts bigint)
    JOIN ${w} ON ${w}.tenant_id = x.t
    RETURNING 1
  ), hu AS (
    UPDATE tenant_heads th SET position = ${w}.position + n.n
    FROM ${w} JOIN unnest($2::text[], $4::bigint[]) AS n(t, n) ON n.t = ${w}.tenant_id
    WHERE th.tenant_id = ${w}.tenant_id AND n.n > 0
    RETURNING 1
  )
  SELECT (SELECT stale FROM chk) AS stale,
         ${shape.conditions ? 'coalesce((SELECT raced FROM rc), false)' : 'false'} AS raced,
         coalesce((SELECT array_agg(tenant_id) FROM h), '{}') AS tenants,
         coalesce((SELECT array_agg(position) FROM h), '{}') AS bases,
         (SELECT count(*) FROM ins) AS inserted`,
  };
}

/**
 * The conditions as es_condition_raced takes them (condition-recheck-schema.ts): every item of
 * every condition, `{t, a, g, y}` (tenant, after, distinct tags, distinct types), one JSON
 * document. Any item met is a condition met: the statement only needs to know whether one was.
 */
export function conditionRaceItems(conditions: BatchCondition[]): string {
  return JSON.stringify(
    conditions.flatMap((c) =>
      c.query.items.map((item) => ({ t: c.tenantId, a: c.after, g: distinct(item.tags), y: distinct(item.types) })),
    ),
  );
}

/** The keys a batch carries that the store remembers (not expired), each with the events it names. */
export const REMEMBERED_KEYS = {
  // Not a named (prepared) statement: its generic plan, made while idempotency_keys was nearly empty,
  // stayed a scan of the table for the life of the connection, and keyed appends slowed as the table
  // grew (bench:idempotency on PostgreSQL: 2.7k → 1.0k appends/s within 50 s). Planned each time with
  // its parameters, each key is a primary-key probe and its events a range of the events' key.
  text: `SELECT ${REMEMBERED_KEY_COLUMNS}
         FROM unnest($1::text[], $2::text[], $3::bigint[]) AS q(t, key, nb)
         CROSS JOIN LATERAL (SELECT * FROM idempotency_keys i WHERE i.tenant_id = q.t AND i.idem_key = q.key AND i.created_at >= q.nb) k
         CROSS JOIN LATERAL (SELECT * FROM events v WHERE v.tenant_id = k.tenant_id AND v.position BETWEEN k.first_position AND k.last_position) e
         ORDER BY k.tenant_id, k.idem_key, e.position`,
};

/** Under the tenants' lock: expired rows of the batch's keys go, so the keys can be taken again. */
export const DELETE_EXPIRED_KEYS = {
  // Unnamed for the same reason as REMEMBERED_KEYS.
  text: `DELETE FROM idempotency_keys k USING unnest($1::text[], $2::text[], $3::bigint[]) AS q(t, key, nb)
         WHERE k.tenant_id = q.t AND k.idem_key = q.key AND k.created_at < q.nb`,
};

/** The tenants' counter rows locked, in tenant order, and read (the locked path plans on the real heads). */
export const LOCK_HEADS = 'SELECT tenant_id, position FROM tenant_heads WHERE tenant_id = ANY($1::text[]) ORDER BY tenant_id FOR UPDATE';
