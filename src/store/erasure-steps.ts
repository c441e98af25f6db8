import { DomainError, notFound, reservedName } from '../common/domain-error';
import { ERASED_EVENT_TYPE, ERASURES_AGGREGATE_ID, ErasureResult, SYSTEM_AGGREGATE_TYPE } from './erasure.port';
import { EVENT_COLUMNS, EventDbRow, epochMsOf, toStoredEvent } from './event-row';
import { sqlTime } from './sql-dialect';
import { SqlDialect } from './sql-runner';
import { uuidv7 } from '../common/uuid-v7';
import { createHash } from 'node:crypto';

/** One statement of an erasure: `all` answers rows, `run` the number of rows changed. */
export type ErasureStep = { kind: 'all'; sql: string; params: unknown[] } | { kind: 'run'; sql: string; params: unknown[] };

/** The text an erased notification's state becomes (and its digest: stored once per tenant like any state). */
export const ERASED_STATE = '{}';
// The same digest as stateDigest (sql-notification-repository.ts) gives, computed here: that file imports this one.
export const ERASED_STATE_DIGEST = createHash('sha256').update(ERASED_STATE, 'utf8').digest('base64');

const all = (sql: string, params: unknown[]): ErasureStep => ({ kind: 'all', sql, params });
const run = (sql: string, params: unknown[]): ErasureStep => ({ kind: 'run', sql, params });

interface StreamRow {
  aggregate_type: string;
  version: number | string;
  erased_at: number | string | Date | null;
  erased_position: number | string | null;
}

/**
 * The erasure as a sequence of statements (`?` placeholders), the same on both stores; each
 * adapter drives it inside one transaction of its own (SQLite: the writer thread's, synchronous;
 * PostgreSQL: a pooled client's), feeding each statement's answer back in. A generator, so the one
 * text serves a synchronous and an asynchronous driver.
 *
 * Locks, in this order (PostgreSQL; SQLite's BEGIN IMMEDIATE holds its one write lock throughout):
 *  1. the tenant's counter row (tenant_heads) FOR UPDATE: the lock every locked append takes, and
 *     every append's own statement takes before it writes. The `$erased` event takes its position
 *     from it, so positions stay gap-free and in commit order.
 *  2. the tenant's notification counter rows (notification_heads): a lane logs a state change
 *     under its projection's row, so no lane is between its lock and its commit while the
 *     notifications are rewritten here; one that commits later sees the stream erased and logs
 *     the erased state (logStateChanges). Lanes take one such row each: no cycle with this.
 */
export function* erasureSteps(
  dialect: SqlDialect,
  tenantId: string,
  aggregateId: string,
  now: number,
): Generator<ErasureStep, ErasureResult, any> {
  const forUpdate = dialect === 'postgres' ? ' FOR UPDATE' : '';
  const heads: { position: number | string }[] = yield all(`SELECT position FROM tenant_heads WHERE tenant_id = ?${forUpdate}`, [tenantId]);
  const [stream]: StreamRow[] = yield all(
    `SELECT aggregate_type, version, erased_at, erased_position FROM streams WHERE tenant_id = ? AND aggregate_id = ?${forUpdate}`,
    [tenantId, aggregateId],
  );
  if (!stream) throw notFound(`aggregate '${aggregateId}'`);
  if (stream.aggregate_type.startsWith('$')) throw reservedName('aggregateType', stream.aggregate_type);

  if (stream.erased_at != null) {
    // Erased before: the same answer as the first time (DELETE is idempotent), nothing written.
    const [first]: EventDbRow[] = yield all(`SELECT ${EVENT_COLUMNS} FROM events WHERE tenant_id = ? AND position = ?`, [
      tenantId,
      stream.erased_position,
    ]);
    if (!first) throw new DomainError('INTERNAL', `the $erased event of '${aggregateId}' is missing`);
    return result(aggregateId, stream, epochMsOf(stream.erased_at), toStoredEvent(first), true);
  }

  const position = Number(heads[0]?.position ?? 0) + 1;
  const at = sqlTime(now);
  // 1. The events become tombstones; correlation and causation ids stay (README "Erasure"). Their
  //    tags go, index rows first (found through the events still tagged): an erased event matches no query.
  yield run(
    `DELETE FROM event_tags WHERE tenant_id = ? AND position IN
       (SELECT e.position FROM events e WHERE e.tenant_id = ? AND e.aggregate_id = ? AND e.tags IS NOT NULL)`,
    [tenantId, tenantId, aggregateId],
  );
  yield run(`UPDATE events SET data = '{}', metadata = NULL, tags = NULL, erased_at = ? WHERE tenant_id = ? AND aggregate_id = ?`, [
    at,
    tenantId,
    aggregateId,
  ]);
  // 2. The stream is frozen at its version (the CHECK refuses any append that planned otherwise).
  yield run(`UPDATE streams SET erased_at = ?, erased_version = version, erased_position = ? WHERE tenant_id = ? AND aggregate_id = ?`, [
    at,
    position,
    tenantId,
    aggregateId,
  ]);
  // 3. The reducer's state.
  yield run('DELETE FROM snapshots WHERE tenant_id = ? AND aggregate_id = ?', [tenantId, aggregateId]);
  //    And the reducer states idempotency keys remembered with their first answers (a replay then
  //    answers the tombstones without a state; README "Retrying appends safely").
  yield run(
    `UPDATE idempotency_keys SET outcome = NULL WHERE tenant_id = ? AND outcome IS NOT NULL
     AND first_position IN (SELECT e.position FROM events e WHERE e.tenant_id = ? AND e.aggregate_id = ?)`,
    [tenantId, tenantId, aggregateId],
  );
  // 4. The notifications its events caused: their state becomes '{}' (their webhook deliveries,
  //    pending or retried later, read it when sent); the old texts go once nothing refers to them.
  yield run('UPDATE notification_heads SET last_sequence = last_sequence WHERE tenant_id = ?', [tenantId]);
  const old: { state_id: number | string }[] = yield all(
    'SELECT DISTINCT state_id FROM notifications WHERE tenant_id = ? AND aggregate_id = ?',
    [tenantId, aggregateId],
  );
  if (old.length > 0) {
    yield run('INSERT INTO notification_states (tenant_id, digest, state) VALUES (?, ?, ?) ON CONFLICT (tenant_id, digest) DO NOTHING', [
      tenantId,
      ERASED_STATE_DIGEST,
      ERASED_STATE,
    ]);
    yield run(
      `UPDATE notifications SET state_id = (SELECT s.state_id FROM notification_states s WHERE s.tenant_id = ? AND s.digest = ?)
       WHERE tenant_id = ? AND aggregate_id = ?`,
      [tenantId, ERASED_STATE_DIGEST, tenantId, aggregateId],
    );
    for (let i = 0; i < old.length; i += 500) {
      const ids = old.slice(i, i + 500).map((r) => Number(r.state_id));
      yield run(
        `DELETE FROM notification_states WHERE tenant_id = ? AND digest <> ? AND state_id IN (${ids.map(() => '?').join(', ')})
         AND NOT EXISTS (SELECT 1 FROM notifications n WHERE n.tenant_id = notification_states.tenant_id AND n.state_id = notification_states.state_id)`,
        [tenantId, ERASED_STATE_DIGEST, ...ids],
      );
    }
  }
  // 5. The $erased event at the tenant's head, on the tenant's $erasures stream.
  const [sys]: { version: number | string }[] = yield all('SELECT version FROM streams WHERE tenant_id = ? AND aggregate_id = ?', [
    tenantId,
    ERASURES_AGGREGATE_ID,
  ]);
  const version = Number(sys?.version ?? 0) + 1;
  const eventId = uuidv7(now);
  const data = JSON.stringify({ aggregateId, aggregateType: stream.aggregate_type });
  yield run(
    `INSERT INTO events (tenant_id, position, aggregate_id, version, event_id, aggregate_type, event_type, data, metadata, correlation_id, causation_id, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, ?)`,
    [tenantId, position, ERASURES_AGGREGATE_ID, version, eventId, SYSTEM_AGGREGATE_TYPE, ERASED_EVENT_TYPE, data, at],
  );
  yield run(
    `INSERT INTO streams (tenant_id, aggregate_id, aggregate_type, version) VALUES (?, ?, ?, ?)
     ON CONFLICT (tenant_id, aggregate_id) DO UPDATE SET version = excluded.version`,
    [tenantId, ERASURES_AGGREGATE_ID, SYSTEM_AGGREGATE_TYPE, version],
  );
  yield run(
    `INSERT INTO tenant_heads (tenant_id, position) VALUES (?, ?) ON CONFLICT (tenant_id) DO UPDATE SET position = excluded.position`,
    [tenantId, position],
  );
  const erasedEvent = {
    position,
    eventId,
    aggregateId: ERASURES_AGGREGATE_ID,
    aggregateType: SYSTEM_AGGREGATE_TYPE,
    eventType: ERASED_EVENT_TYPE,
    version,
    timestamp: now,
    data,
    metadata: null,
    correlationId: null,
    causationId: null,
  };
  return result(aggregateId, stream, now, erasedEvent, false);
}

function result(
  aggregateId: string,
  stream: StreamRow,
  erasedAt: number,
  erasedEvent: ErasureResult['erasedEvent'],
  alreadyErased: boolean,
): ErasureResult {
  return { aggregateId, aggregateType: stream.aggregate_type, erasedAt, version: Number(stream.version), erasedEvent, alreadyErased };
}

/** Drives the steps synchronously (SQLite: inside the caller's transaction). */
export function driveSync(steps: Generator<ErasureStep, ErasureResult, any>, exec: (s: ErasureStep) => unknown): ErasureResult {
  let next = steps.next();
  while (!next.done) next = steps.next(exec(next.value));
  return next.value;
}

/** Drives the steps one statement at a time (PostgreSQL: on the transaction's client). */
export async function driveAsync(
  steps: Generator<ErasureStep, ErasureResult, any>,
  exec: (s: ErasureStep) => Promise<unknown>,
): Promise<ErasureResult> {
  let next = steps.next();
  while (!next.done) next = steps.next(await exec(next.value));
  return next.value;
}
