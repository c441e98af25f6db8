import { AppendOutcome, AppendRequest, EventQuery, EventQueryItem } from './event-log.port';

/** Appends a value to the statement's parameters and answers its placeholder. */
export type Param = (v: unknown) => string;

/** The part of the log one query reads: after (forward) or before (backward) a position, at most `limit` per range. */
export interface QueryRange {
  tenantId: string;
  direction: 'forward' | 'backward';
  cursor: number;
  limit: number;
  /** The log read's own filter lists (AND-ed with the query); empty: no filter. */
  aggregateTypes: string[];
  eventTypes: string[];
}

/**
 * Closes a correlated probe (`EXISTS (SELECT 1 … WHERE … = outer.position<fence>)`) so that it runs
 * as what it is written as: one primary-key read per outer row. Without it PostgreSQL may flatten
 * the EXISTS into a join, and on a table it has no statistics for yet (every fresh tag index) it
 * chose a nested loop that reads every row of the tag for each outer row: an event webhook on a tag
 * of 10,000 events took 1.7 s per 1,000-event window, a two-tag query 95 ms instead of 1 (measured,
 * BENCHMARKS.md "Issue 28, tag probes"). `OFFSET 0` is PostgreSQL's documented optimisation fence
 * for subqueries; SQLite runs a correlated EXISTS per row anyway (and has no bare OFFSET).
 */
export const probeFence = (dialect: 'sqlite' | 'postgres'): string => (dialect === 'postgres' ? ' OFFSET 0' : '');

/** Whether an item matches every event (neither types nor tags): the query is then the plain log. */
export const matchesAll = (item: EventQueryItem): boolean => (item.types ?? []).length === 0 && (item.tags ?? []).length === 0;

/**
 * The SQL of a DCB query (docs/dcb.md) over the tenant's log, the same for both stores: one
 * `SELECT position …` per index range, each in position order and limited, for the caller to merge
 * (readLog, log-query-sql.ts) or to take the first of (an append condition's hit, conditionHitSql).
 * How each item is read, so that a page costs what it returns, not the tenant's whole log:
 *  - an item with tags drives from `event_tags` on its first tag (one range of its primary key,
 *    (tenant_id, tag, position)), each other tag a point probe of that key, its types (and the read's
 *    filters) checked on the event row found by its primary key;
 *  - an item with only types is one range of events_by_event_type per type, the read's aggregate
 *    type filter checked on the row;
 *  - an item with neither is the plain log (the caller's; `plainBranch` for a condition).
 * Erased events match no query: their tags are gone with their tag rows (erasure-steps.ts), and the
 * ranges by type skip them (`erased_at IS NULL`, checked on the row the range reads anyway).
 * Answers [] when no event can match (every item's types outside the read's event type filter).
 */
export function queryBranches(query: EventQuery, r: QueryRange, param: Param, dialect: 'sqlite' | 'postgres'): string[] {
  const branches: string[] = [];
  const cmp = r.direction === 'backward' ? '<' : '>';
  const order = r.direction === 'backward' ? 'DESC' : 'ASC';
  const filterTypes = distinct(r.eventTypes);
  const filterAggregates = distinct(r.aggregateTypes);
  const seen = new Set<string>();
  for (const item of query.items) {
    const tags = distinct(item.tags);
    // The item's types within the read's filter (both given: an event type must be in both).
    let types = distinct(item.types);
    if (types.length > 0 && filterTypes.length > 0) types = types.filter((x) => filterTypes.includes(x));
    else if (types.length === 0) types = filterTypes;
    if (distinct(item.types).length > 0 && types.length === 0) continue; // no type can match
    if (tags.length > 0) {
      const shape = JSON.stringify(['tags', tags, types]);
      if (seen.has(shape)) continue;
      seen.add(shape);
      const [drive, ...others] = tags;
      const join = types.length > 0 || filterAggregates.length > 0;
      let sql =
        `SELECT g.position AS position FROM event_tags g${join ? ' CROSS JOIN events e' : ''}` +
        ` WHERE g.tenant_id = ${param(r.tenantId)} AND g.tag = ${param(drive)} AND g.position ${cmp} ${param(r.cursor)}`;
      for (const other of others) {
        sql += ` AND EXISTS (SELECT 1 FROM event_tags o WHERE o.tenant_id = g.tenant_id AND o.tag = ${param(other)} AND o.position = g.position${probeFence(dialect)})`;
      }
      if (join) sql += ' AND e.tenant_id = g.tenant_id AND e.position = g.position';
      if (types.length > 0) sql += ` AND e.event_type IN (${types.map(param).join(', ')})`;
      if (filterAggregates.length > 0) sql += ` AND e.aggregate_type IN (${filterAggregates.map(param).join(', ')})`;
      branches.push(`${sql} ORDER BY g.position ${order} LIMIT ${param(r.limit)}`);
      continue;
    }
    for (const type of types) {
      const shape = JSON.stringify(['type', type]);
      if (seen.has(shape)) continue;
      seen.add(shape);
      // SQLite has no statistics: told the index, as in log-query-sql.ts.
      const from = dialect === 'sqlite' ? 'events INDEXED BY events_by_event_type' : 'events';
      let sql =
        `SELECT position FROM ${from} WHERE tenant_id = ${param(r.tenantId)} AND event_type = ${param(type)}` +
        ` AND position ${cmp} ${param(r.cursor)} AND erased_at IS NULL`;
      if (filterAggregates.length > 0) sql += ` AND aggregate_type IN (${filterAggregates.map(param).join(', ')})`;
      branches.push(`${sql} ORDER BY position ${order} LIMIT ${param(r.limit)}`);
    }
  }
  return branches;
}

/** The plain log as a branch (an item that matches every event, no filters): not erased, after the cursor. */
export function plainBranch(r: QueryRange, param: Param): string {
  const cmp = r.direction === 'backward' ? '<' : '>';
  const order = r.direction === 'backward' ? 'DESC' : 'ASC';
  return (
    `SELECT position FROM events WHERE tenant_id = ${param(r.tenantId)} AND position ${cmp} ${param(r.cursor)} AND erased_at IS NULL` +
    ` ORDER BY position ${order} LIMIT ${param(r.limit)}`
  );
}

/** An append condition of a group commit, by its request's index (a transaction's rides on its first member). */
export interface BatchCondition {
  index: number;
  tenantId: string;
  query: EventQuery;
  after: number;
}

/** The batch's conditions; with the plan's outcomes, only those of the requests it accepted. */
export function conditionsOf(requests: AppendRequest[], outcomes?: AppendOutcome[]): BatchCondition[] {
  return requests.flatMap((r, index) =>
    r.condition && (!outcomes || outcomes[index].ok)
      ? [{ index, tenantId: r.tenantId, query: r.condition.failIfEventsMatch, after: r.condition.after ?? 0 }]
      : [],
  );
}

/**
 * One statement for a group commit's conditions: for each (request index, tenant, query, after),
 * the first position after `after` matching the query, NULL when none (one row per condition,
 * `r` the index given). Each item is one index probe that stops at its first row (LIMIT 1 per branch).
 */
export function conditionHitSql(conditions: BatchCondition[], param: Param, dialect: 'sqlite' | 'postgres'): string {
  const parts = conditions.map((c) => {
    const range: QueryRange = { tenantId: c.tenantId, direction: 'forward', cursor: c.after, limit: 1, aggregateTypes: [], eventTypes: [] };
    const index = Math.trunc(c.index); // a literal: the caller's own number (PostgreSQL cannot type a bare parameter here)
    const branches = c.query.items.some(matchesAll) ? [plainBranch(range, param)] : queryBranches(c.query, range, param, dialect);
    if (branches.length === 0) return `SELECT ${index} AS r, NULL AS p`;
    const union = branches.map((b, i) => `SELECT * FROM (${b}) AS b${i}`).join(' UNION ALL ');
    return `SELECT ${index} AS r, (SELECT min(position) FROM (${union}) AS u) AS p`;
  });
  return parts.join(' UNION ALL ');
}

export function distinct(values: string[] | undefined): string[] {
  return [...new Set(values ?? [])];
}
