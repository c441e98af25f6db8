import { EventQuery } from './event-log.port';
import { probeFence } from './event-query-sql';

/**
 * ` AND (…)`: the DCB query (docs/dcb.md) as a predicate on one row of `events` (`alias`), with `?`
 * placeholders and their values in order — for a scan already bounded by position (an event
 * webhook's window), where event-query-sql.ts's index ranges would be a second read. A type list is
 * an `IN`; each tag an EXISTS on event_tags, a point read of its primary key (tenant_id, tag,
 * position), fenced so that it stays one (`probeFence`). An item without types or tags matches every
 * row. Erased events match no query, as on readLog (their tag rows are gone; `erased_at IS NULL` for
 * the items without tags).
 */
export function eventQueryPredicate(q: EventQuery, dialect: 'sqlite' | 'postgres', alias = 'events'): { sql: string; params: string[] } {
  const params: string[] = [];
  const items = q.items.map((item) => {
    const parts: string[] = [];
    if (item.types && item.types.length > 0) {
      parts.push(`${alias}.event_type IN (${item.types.map(() => '?').join(', ')})`);
      params.push(...item.types);
    }
    for (const tag of item.tags ?? []) {
      parts.push(
        `EXISTS (SELECT 1 FROM event_tags g WHERE g.tenant_id = ${alias}.tenant_id AND g.tag = ? AND g.position = ${alias}.position${probeFence(dialect)})`,
      );
      params.push(tag);
    }
    return parts.length > 0 ? `(${parts.join(' AND ')})` : '1 = 1';
  });
  return { sql: ` AND ${alias}.erased_at IS NULL AND (${items.join(' OR ')})`, params };
}
