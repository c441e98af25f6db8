/**
 * Where SQLite and PostgreSQL differ for the repositories shared over `SqlRunner`, all of it, so
 * that the shared SQL never branches on the store:
 * - placeholders: the shared SQL writes `?`; PostgreSQL's runner numbers them (toPgPlaceholders).
 * - time columns (tenants, api keys, limits, uploads, bindings, snapshots): `timestamptz` on
 *   PostgreSQL, epoch-ms INTEGER on SQLite. The shared SQL binds them as `sqlTime(ms)`, a Date that
 *   pg sends as a timestamp and the SQLite runners bind as its epoch ms (sqliteParams); a read gives
 *   a Date on PostgreSQL and a number on SQLite, and epochMs() reads both to the same number.
 *   (Later tables keep their times as bigint epoch ms on both: plain numbers, nothing to do.)
 * - bigint: the PostgreSQL pool parses int8 as a JS number (postgres-store.ts), so COUNT(*) and
 *   bigint columns read as numbers on both; mappers still pass them through Number().
 * - bytes: a Buffer binds to BLOB and BYTEA alike and reads back as a Buffer on both (on its way to
 *   SQLite's writer thread it becomes a Uint8Array, which better-sqlite3 binds as the same BLOB).
 * - upserts: `INSERT … ON CONFLICT (…) DO UPDATE SET c = excluded.c [WHERE …]` and
 *   `ON CONFLICT DO NOTHING` are spelled the same on both (SQLite ≥ 3.24); no RETURNING is used.
 * - transactions: SqlRunner.batch is all or nothing on both (a transaction on PostgreSQL; on SQLite
 *   a transaction on the event loop's connection, or a savepoint of the writer thread's group commit).
 * - serialising a check-then-write across instances (serializedBy): on SQLite the batch's first
 *   write statement takes the database's one write lock, so nothing is needed; on PostgreSQL an
 *   advisory lock held to the transaction's end, taken first in the batch.
 */

import { SqlDialect, SqlStatement } from './sql-runner';

/**
 * Statements that open a batch whose check and write must not interleave with the same batch of
 * another instance (e.g. "no tenant yet, so create the first"): see the list above.
 */
export function serializedBy(dialect: SqlDialect, lockId: number): SqlStatement[] {
  return dialect === 'postgres' ? [{ sql: 'SELECT pg_advisory_xact_lock(?)', params: [lockId] }] : [];
}

/** A time column's value to bind: timestamptz on PostgreSQL, epoch ms on SQLite. */
export const sqlTime = (epochMillis: number): Date => new Date(epochMillis);

/** A time column as read: a Date (PostgreSQL timestamptz) or a number (SQLite INTEGER), as epoch ms. */
export function epochMs(v: number | Date): number;
export function epochMs(v: number | Date | null): number | null;
export function epochMs(v: number | Date | null): number | null {
  return v === null ? null : v instanceof Date ? v.getTime() : Number(v);
}

/** Parameters as better-sqlite3 binds them: time values (Dates) as epoch ms, the rest as given. */
export function sqliteParams(params: unknown[]): unknown[] {
  return params.some((p) => p instanceof Date) ? params.map((p) => (p instanceof Date ? p.getTime() : p)) : params;
}

/**
 * The locks that make a key's webhook head one decision (sql-webhook-repository.ts, "Heads").
 * PostgreSQL, transaction-scoped advisory locks, taken first in their batch:
 * - the projection's lock (the bigint key space): exclusive for a write that decides the heads of
 *   many keys at once (enqueue, replay); shared for one that moves one key's head (a completion,
 *   a repair), so completions of different keys never wait for each other;
 * - the key's lock (the two-int4 key space, which never meets the bigint one), taken only while
 *   holding the projection's shared lock: completions of one key, one at a time.
 * Every holder takes at most one of each, projection before key: no cycle, so no deadlock. A hash
 * collision only makes two projections or keys wait for each other. SQLite: every write batch
 * takes the one write lock (BEGIN IMMEDIATE) and reads what committed before it: nothing to add.
 */
export function webhookProjectionLock(
  dialect: SqlDialect,
  tenantId: string,
  projectionId: string,
  mode: 'exclusive' | 'shared',
): SqlStatement[] {
  if (dialect !== 'postgres') return [];
  const fn = mode === 'exclusive' ? 'pg_advisory_xact_lock' : 'pg_advisory_xact_lock_shared';
  return [{ sql: `SELECT ${fn}(hashtextextended(?, 23))`, params: [JSON.stringify([tenantId, projectionId])] }];
}

/**
 * See webhookProjectionLock: the projection's shared lock, then the key's, in one statement (one
 * round trip per completion): the subquery (kept apart by OFFSET 0) takes the first before the
 * outer select list takes the second.
 */
export function webhookKeyLock(dialect: SqlDialect, tenantId: string, projectionId: string, stateKey: string): SqlStatement[] {
  if (dialect !== 'postgres') return [];
  const projection = JSON.stringify([tenantId, projectionId]);
  return [
    {
      sql: `SELECT pg_advisory_xact_lock(hashtext(?), hashtext(?))
            FROM (SELECT pg_advisory_xact_lock_shared(hashtextextended(?, 23)) OFFSET 0) AS projection_lock`,
      params: [projection, stateKey, projection],
    },
  ];
}

/**
 * `select` with its rows share-locked to the transaction's end on PostgreSQL (a concurrent UPDATE
 * of them waits for this commit, and this waits for one under way; share-lockers do not wait for
 * each other); nothing on SQLite, where a write batch holds the one write lock anyway.
 */
export function lockedForShare(dialect: SqlDialect, select: SqlStatement): SqlStatement[] {
  return dialect === 'postgres' ? [{ ...select, sql: `${select.sql} FOR SHARE` }] : [];
}

/**
 * The column types of the schema's DDL (migrations.ts), the one place its dialects differ in type:
 * - `int`: a count or position, 64-bit (SQLite's INTEGER is 64-bit already);
 * - `time`: the early tables' time columns (see "time columns" above);
 * - `uuid`: events.event_id, a native uuid on PostgreSQL, its text on SQLite;
 * - `withoutRowid`: SQLite's clustered tables (keyed by their primary key); PostgreSQL has none.
 * SQLite's names are upper case and PostgreSQL's lower case, as the shipped migrations wrote them.
 */
export interface DdlTypes {
  text: 'TEXT' | 'text';
  int: 'INTEGER' | 'bigint';
  time: 'INTEGER' | 'timestamptz';
  bytes: 'BLOB' | 'bytea';
  uuid: 'TEXT' | 'uuid';
  withoutRowid: ' WITHOUT ROWID' | '';
}

export function ddlTypes(dialect: SqlDialect): DdlTypes {
  return dialect === 'postgres'
    ? { text: 'text', int: 'bigint', time: 'timestamptz', bytes: 'bytea', uuid: 'uuid', withoutRowid: '' }
    : { text: 'TEXT', int: 'INTEGER', time: 'INTEGER', bytes: 'BLOB', uuid: 'TEXT', withoutRowid: ' WITHOUT ROWID' };
}
