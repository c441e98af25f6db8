import { EventQuery } from './event-log.port';

/**
 * ` AND (…)`: the DCB query (docs/dcb.md) as a predicate on a row of `events` (`alias`), with `?`
 * placeholders and their values in order. A type list is an `IN`; each tag is an EXISTS on
 * event_tags (the store's tag index, event-tags-schema.ts), a point read of its primary key
 * (tenant_id, tag, position) per row looked at, so the predicate costs the same on both stores.
 * An item without types or tags matches every row.
 */
export function eventQuerySql(q: EventQuery, alias = 'events'): { sql: string; params: string[] } {
  const params: string[] = [];
  const items = q.items.map((item) => {
    const parts: string[] = [];
    if (item.types && item.types.length > 0) {
      parts.push(`${alias}.event_type IN (${item.types.map(() => '?').join(', ')})`);
      params.push(...item.types);
    }
    for (const tag of item.tags ?? []) {
      parts.push(
        `EXISTS (SELECT 1 FROM event_tags g WHERE g.tenant_id = ${alias}.tenant_id AND g.tag = ? AND g.position = ${alias}.position)`,
      );
      params.push(tag);
    }
    return parts.length > 0 ? `(${parts.join(' AND ')})` : '1 = 1';
  });
  return { sql: ` AND (${items.join(' OR ')})`, params };
}
