import { EventQuery, StoredEvent } from './event-log.port';

/**
 * Whether `e` matches the DCB query (docs/dcb.md): any item matches, an item matching when the event's
 * type is one of its `types` (absent or empty: any) and its tags include every one of its `tags`
 * (absent or empty: any). Erased events match no query (as on readLog).
 * The in-memory adapters' rule; the SQL stores say the same in SQL (event-query-predicate.ts).
 */
export function matchesEventQuery(q: EventQuery, e: Pick<StoredEvent, 'eventType' | 'tags' | 'erasedAt'>): boolean {
  if (e.erasedAt !== undefined) return false;
  return q.items.some(
    (item) =>
      (!item.types || item.types.length === 0 || item.types.includes(e.eventType)) &&
      (!item.tags || item.tags.every((t) => e.tags?.includes(t) ?? false)),
  );
}
