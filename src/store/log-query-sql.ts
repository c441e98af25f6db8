import { LogQuery } from './event-log.port';
import { EVENT_COLUMNS } from './event-row';

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

  const filter = () => (filterValues.length > 0 ? ` AND ${filterColumn} IN (${filterValues.map(param).join(', ')})` : '');
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

function distinct(values: string[] | undefined): string[] {
  return [...new Set(values ?? [])];
}
