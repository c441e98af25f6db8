import type { Pool, PoolClient } from 'pg';
import { matchesQuery } from '../append-plan';
import { AppendRequest } from '../event-log.port';
import { conditionHitSql, conditionsOf } from '../event-query-sql';

/**
 * Append conditions (DCB) in PostgreSQL's group commit (PostgresEventLog): which batches
 * must be decided under the locks from the start, and the locked path's read.
 */

/**
 * Whether a condition of the batch may be met by an event of an earlier request in it (same tenant,
 * matching its query; whether that request is accepted, and where its events land, aside). Such a
 * batch is decided under the locks, on real positions: planned on offsets, `after` could not be
 * compared with them.
 */
export function mayMeetOwnBatch(requests: AppendRequest[]): boolean {
  for (let i = 0; i < requests.length; i++) {
    const c = requests[i].condition;
    if (!c) continue;
    for (let j = 0; j < i; j++) {
      const earlier = requests[j];
      if (earlier.tenantId !== requests[i].tenantId) continue;
      if (earlier.transaction && earlier.transaction.id === requests[i].transaction?.id) continue; // its own transaction
      if (earlier.events.some((e) => matchesQuery(c.failIfEventsMatch, e))) return true;
    }
  }
  return false;
}

/**
 * For each request with a condition (by index), the first stored position after its `after` matching
 * its query: one statement for the batch (conditionHitSql), run under the tenants' head locks.
 */
export async function lockedConditionHits(
  db: Pick<Pool, 'query'> | PoolClient,
  requests: AppendRequest[],
): Promise<Map<number, number> | undefined> {
  const conditions = conditionsOf(requests);
  if (conditions.length === 0) return undefined;
  const values: unknown[] = [];
  const text = conditionHitSql(conditions, (v) => (values.push(v), `$${values.length}`), 'postgres');
  // Unnamed: its text varies with the queries' shapes, too many to keep parsed per connection.
  const { rows } = await db.query<{ r: number; p: number | string | null }>(text, values);
  return new Map(rows.filter((x) => x.p !== null).map((x) => [Number(x.r), Number(x.p)]));
}
