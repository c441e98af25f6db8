import type Database from 'better-sqlite3';
import { idempotencyKeyOf, MonotonicClock, planAppends, RememberedKey, streamKey, tenantsOf } from '../append-plan';
import { AppendOutcome, AppendRequest, StreamInfo } from '../event-log.port';
import { REMEMBERED_KEY_COLUMNS, REMEMBERED_KEY_JOIN, RememberedKeyRow, rememberedKeys } from '../idempotency-rows';
import { StreamDbRow, tagsColumn, toStreamInfo } from '../event-row';
import { conditionHitSql, conditionsOf } from '../event-query-sql';

/** How many conditions' query shapes stay prepared on the writer thread. */
const CONDITION_SHAPES = 256;

/**
 * One group commit on SQLite, synchronous. SQLite has no round trips, so prepared statements run
 * per row inside one transaction are its set-based form: what group commit saves is the fsync
 * per commit. Runs inside the append worker (see AppendWriterTurns in append-writer-thread.ts).
 */
export class SqliteAppendTransaction {
  private readonly clock = new MonotonicClock();
  private readonly db: Database.Database;
  private readonly run: Database.Transaction<(reqs: AppendRequest[]) => AppendOutcome[]>;
  /** Conditions' statements by text, in order of last use (conditionStatement). */
  private readonly conditionStatements = new Map<string, Database.Statement>();

  constructor(db: Database.Database) {
    this.db = db;
    const head = db.prepare('SELECT position FROM tenant_heads WHERE tenant_id = ?');
    const stream = db.prepare('SELECT aggregate_type, version, erased_at FROM streams WHERE tenant_id = ? AND aggregate_id = ?');
    const insertEvent = db.prepare(
      `INSERT INTO events (tenant_id, position, aggregate_id, version, event_id, aggregate_type, event_type,
         data, metadata, correlation_id, causation_id, created_at, trace_parent, trace_state, tags) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
    );
    const insertTag = db.prepare('INSERT INTO event_tags (tenant_id, tag, position) VALUES (?,?,?)');
    const upsertStream = db.prepare(
      `INSERT INTO streams (tenant_id, aggregate_id, aggregate_type, version) VALUES (?,?,?,?)
       ON CONFLICT (tenant_id, aggregate_id) DO UPDATE SET version = excluded.version`,
    );
    const upsertHead = db.prepare(
      `INSERT INTO tenant_heads (tenant_id, position) VALUES (?, ?)
       ON CONFLICT (tenant_id) DO UPDATE SET position = excluded.position`,
    );
    const upsertSnapshot = db.prepare(
      `INSERT INTO snapshots (tenant_id, aggregate_id, aggregate_type, binding_id, version, state, failed_version, error, updated_at)
       VALUES (?,?,?,?,?,?,?,?,?)
       ON CONFLICT (tenant_id, aggregate_id) DO UPDATE SET binding_id = excluded.binding_id, version = excluded.version,
         state = excluded.state, failed_version = excluded.failed_version, error = excluded.error, updated_at = excluded.updated_at`,
    );
    // Read under the write lock (BEGIN IMMEDIATE), so a key found absent stays absent until this commit.
    const rememberedKey = db.prepare(
      `SELECT ${REMEMBERED_KEY_COLUMNS} FROM ${REMEMBERED_KEY_JOIN}
       WHERE k.tenant_id = ? AND k.idem_key = ? AND k.created_at >= ? ORDER BY e.position`,
    );
    // A row still there for the key can only be an expired one (read above as absent): replaced.
    const upsertKey = db.prepare(
      `INSERT INTO idempotency_keys (tenant_id, idem_key, request_hash, first_position, last_position, outcome, created_at)
       VALUES (?,?,?,?,?,?,?)
       ON CONFLICT (tenant_id, idem_key) DO UPDATE SET request_hash = excluded.request_hash,
         first_position = excluded.first_position, last_position = excluded.last_position,
         outcome = excluded.outcome, created_at = excluded.created_at`,
    );
    this.run = db.transaction((reqs: AppendRequest[]) => {
      const heads = new Map<string, number>();
      for (const t of tenantsOf(reqs)) {
        const row = head.get(t) as { position: number } | undefined;
        heads.set(t, row ? Number(row.position) : 0);
      }
      const current = new Map<string, StreamInfo>();
      for (const r of reqs) {
        const key = streamKey(r.tenantId, r.aggregateId);
        if (current.has(key)) continue;
        const s = stream.get(r.tenantId, r.aggregateId) as StreamDbRow | undefined;
        if (s) current.set(key, toStreamInfo(s));
      }
      let remembered: Map<string, RememberedKey> | undefined;
      const looked = new Set<string>();
      for (const r of reqs) {
        if (!r.idempotency) continue; // no key, no statement
        const id = idempotencyKeyOf(r.tenantId, r.idempotency.key);
        if (looked.has(id)) continue; // the same key twice in one group commit: read once
        looked.add(id);
        const rows = rememberedKey.all(r.tenantId, r.idempotency.key, r.idempotency.notBefore) as RememberedKeyRow[];
        remembered = rememberedKeys(rows, remembered);
      }
      // Conditions (DCB): read inside this transaction, which holds the one write lock, so no event can come between.
      const plan = planAppends(reqs, current, heads, this.clock.now(), remembered, this.conditionHits(reqs));
      for (const e of plan.rows) {
        insertEvent.run(
          e.tenantId,
          e.position,
          e.aggregateId,
          e.version,
          e.eventId,
          e.aggregateType,
          e.eventType,
          e.data,
          e.metadata,
          e.correlationId,
          e.causationId,
          e.timestamp,
          e.traceParent ?? null,
          e.traceState ?? null,
          tagsColumn(e.tags),
        );
        for (const tag of e.tags ?? []) insertTag.run(e.tenantId, tag, e.position);
      }
      for (const s of plan.streams) upsertStream.run(s.tenantId, s.aggregateId, s.aggregateType, s.version);
      for (const [t, p] of plan.heads) upsertHead.run(t, p);
      for (const k of plan.keys) {
        upsertKey.run(k.tenantId, k.key, k.requestHash, k.firstPosition, k.lastPosition, k.outcome, k.createdAt);
      }
      for (const n of plan.snapshots) {
        upsertSnapshot.run(
          n.tenantId,
          n.aggregateId,
          n.aggregateType,
          n.bindingId,
          n.version,
          n.state,
          n.failedVersion,
          n.error,
          n.updatedAt,
        );
      }
      return plan.outcomes;
    });
  }

  /**
   * For each request with a condition (by index), the first stored position after its `after`
   * matching its query. One statement per condition, kept prepared by its text: the text depends
   * only on the query's shape (its values are parameters), and a few shapes recur (a tag, a tag and
   * a type), while a statement for the whole batch would differ with every batch and be compiled
   * each time, on the one writer thread every append waits for.
   */
  private conditionHits(reqs: AppendRequest[]): Map<number, number> | undefined {
    let hits: Map<number, number> | undefined;
    for (const condition of conditionsOf(reqs)) {
      const values: unknown[] = [];
      const sql = conditionHitSql([{ ...condition, index: 0 }], (v) => (values.push(v), '?'), 'sqlite');
      const row = this.conditionStatement(sql).get(...values) as { p: number | null };
      if (row.p !== null) (hits ??= new Map()).set(condition.index, Number(row.p));
    }
    return hits;
  }

  /** The prepared statement of a condition's text, the least recently used one dropped past CONDITION_SHAPES. */
  private conditionStatement(sql: string): Database.Statement {
    let statement = this.conditionStatements.get(sql);
    if (statement) this.conditionStatements.delete(sql);
    else {
      statement = this.db.prepare(sql);
      if (this.conditionStatements.size >= CONDITION_SHAPES) this.conditionStatements.delete(this.conditionStatements.keys().next().value!);
    }
    this.conditionStatements.set(sql, statement);
    return statement;
  }

  /** BEGIN IMMEDIATE: takes the write lock up front, so reads inside see what the writes will follow. */
  append(requests: AppendRequest[]): AppendOutcome[] {
    return this.run.immediate(requests);
  }
}
