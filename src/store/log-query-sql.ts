import { LogQuery } from './event-log.port';
import { EVENT_COLUMNS } from './event-row';
import { matchesAll, queryBranches } from './event-query-sql';

/** The event columns of the alias `e`. */
const E_COLUMNS = EVENT_COLUMNS.split(', ')
  .map((c) => `e.${c}`)
  .join(', ');

/**
 * The SQL of EventLog.readLog, the same for both stores but for how a parameter is written
 * (`param` appends a value and answers its placeholder).
 *
 * A filter drives the read through its index, (tenant_id, event_type, position) or (tenant_id,
 * aggregate_type, position) (event-log-schema.ts): one value is one index range read in position
 * order, stopping at the limit. Several values are one such range each, every one limited, merged
 * by position: at most values × limit rows are looked at, however large the log, where an `IN`
 * list would have the store read every match after the cursor and sort them. When both lists are
 * given the event types drive (the finer of the two, as a rule) and the aggregate types filter the
 * rows found.
 *
 * A DCB query (`q.query`, docs/dcb.md) is read the same way: its ranges (event-query-sql.ts), each
 * limited, give positions, merged without duplicates (an event may match several items) and cut
 * to the limit, and only those events are read, by their primary key. A query with an item that
 * matches every event is the plain log above, without erased events (they match no query).
 */
export function logQuerySql(tenantId: string, q: LogQuery, param: (v: unknown) => string, dialect: 'sqlite' | 'postgres'): string {
  const backward = q.direction === 'backward';
  const cursor = backward ? (q.beforePosition ?? Number.MAX_SAFE_INTEGER) : q.afterPosition;
  const order = backward ? 'DESC' : 'ASC';
  const cmp = backward ? '<' : '>';
  const eventTypes = distinct(q.eventTypes);
  const aggregateTypes = distinct(q.aggregateTypes);
  const [driveColumn, driveValues, filterColumn, filterValues] =
    eventTypes.length > 0
      ? (['event_type', eventTypes, 'aggregate_type', aggregateTypes] as const)
      : (['aggregate_type', aggregateTypes, 'event_type', eventTypes] as const);

  if (q.query && !q.query.items.some(matchesAll)) return queryLogSql(tenantId, q, param, dialect, cursor);
  const notErased = q.query ? ' AND erased_at IS NULL' : '';
  const filter = () => (filterValues.length > 0 ? ` AND ${filterColumn} IN (${filterValues.map(param).join(', ')})` : '') + notErased;
  // SQLite has no statistics (no ANALYZE is run) and would rather walk the primary key, which gives
  // position order, filtering as it goes: the whole log for a rare type. So it is told the index.
  const index = driveColumn === 'event_type' ? 'events_by_event_type' : 'events_by_type';
  const from = (driveValue?: string) => (dialect === 'sqlite' && driveValue !== undefined ? `events INDEXED BY ${index}` : 'events');
  const range = (driveValue?: string) =>
    `SELECT ${EVENT_COLUMNS} FROM ${from(driveValue)} WHERE tenant_id = ${param(tenantId)}` +
    (driveValue !== undefined ? ` AND ${driveColumn} = ${param(driveValue)}` : '') +
    ` AND position ${cmp} ${param(cursor)}${filter()} ORDER BY position ${order} LIMIT ${param(q.limit)}`;

  if (driveValues.length <= 1) return range(driveValues[0]);
  const parts = driveValues.map((v, i) => `SELECT * FROM (${range(v)}) AS r${i}`);
  return `SELECT * FROM (${parts.join(' UNION ALL ')}) AS u ORDER BY position ${order} LIMIT ${param(q.limit)}`;
}

function queryLogSql(tenantId: string, q: LogQuery, param: (v: unknown) => string, dialect: 'sqlite' | 'postgres', cursor: number): string {
  const order = q.direction === 'backward' ? 'DESC' : 'ASC';
  const range = {
    tenantId,
    direction: q.direction,
    cursor,
    limit: q.limit,
    aggregateTypes: q.aggregateTypes ?? [],
    eventTypes: q.eventTypes ?? [],
  };
  const branches = queryBranches(q.query!, range, param, dialect);
  if (branches.length === 0) return `SELECT ${EVENT_COLUMNS} FROM events WHERE tenant_id = ${param(tenantId)} AND 1 = 0`;
  // One range: its positions as they come. Several: merged, each position once, cut to the limit.
  const positions =
    branches.length === 1
      ? branches[0]
      : `SELECT position FROM (${branches.map((b, i) => `SELECT * FROM (${b}) AS r${i}`).join(' UNION ')}) AS u ` +
        `ORDER BY position ${order} LIMIT ${param(q.limit)}`;
  // CROSS JOIN: the positions drive (SQLite keeps the order written), each event one primary key probe.
  return (
    `SELECT ${E_COLUMNS} FROM (${positions}) AS p CROSS JOIN events e ` +
    `WHERE e.tenant_id = ${param(tenantId)} AND e.position = p.position ORDER BY e.position ${order}`
  );
}

function distinct(values: string[] | undefined): string[] {
  return [...new Set(values ?? [])];
}
