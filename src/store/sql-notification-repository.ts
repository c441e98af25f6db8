import { createHash } from 'node:crypto';
import { Notification, NotificationHead, NotificationRepository, RetentionPolicy, StateChange } from './notification-repository.port';
import { SqlRunner, SqlStatement } from './sql-runner';
import { ERASED_STATE, ERASED_STATE_DIGEST } from './erasure-steps';

const N_COLUMNS =
  'n.sequence, n.projection_id, n.aggregate_id, n.aggregate_type, n.state_key, n.version, n.position, s.state, n.timestamp, n.trace_parent, n.trace_state';
/** A notification with its state text (stored once per tenant and text, see sharedStatesMigration). */
// The tenant in the join too: a state text is its tenant's (docs/scaling.md: every statement names the tenant).
const N_WITH_STATE = 'notifications n JOIN notification_states s ON s.tenant_id = n.tenant_id AND s.state_id = n.state_id';

/** The key a state text is stored under, per tenant: identical texts are stored once. */
export function stateDigest(state: string): string {
  return createHash('sha256').update(state, 'utf8').digest('base64');
}

function toNotification(r: any): Notification {
  return {
    sequence: Number(r.sequence),
    projectionId: r.projection_id,
    aggregateId: r.aggregate_id,
    aggregateType: r.aggregate_type,
    stateKey: r.state_key,
    version: Number(r.version),
    position: Number(r.position),
    state: r.state,
    timestamp: Number(r.timestamp),
    ...(r.trace_parent ? { traceParent: r.trace_parent as string } : {}),
    ...(r.trace_state ? { traceState: r.trace_state as string } : {}),
  };
}

/**
 * The statements that log a lane's state changes, run inside `applied`'s transaction, after the
 * lane's checkpoint moved under its guard (so a second run of the same lane, which finds the
 * checkpoint moved, logs nothing: exactly once):
 *  1. lock the projection's counter row, so sequences are handed out in commit order (a reader
 *     tailing by sequence never sees n+1 committed before n);
 *  2. insert the changes numbered from the counter, but only (a) if the version still belongs
 *     to the projection, and (b) up to a pending redeploy's target: beyond it, the pending
 *     version speaks for the projection (see ARCHITECTURE.md);
 *  3. advance the counter to what was inserted.
 * The state texts go to notification_states first (a text the tenant already has is not stored
 * again); each notification refers to its text by id. They are inserted in digest order, so two
 * lanes that share texts take their locks in the same order (PostgreSQL: no deadlock).
 */
export function logStateChanges(
  tenantId: string,
  versionId: string,
  key: string,
  projectionId: string,
  changes: StateChange[],
  now: number,
): SqlStatement[] {
  const digests = changes.map((c) => stateDigest(c.state));
  const texts = new Map<string, string>();
  changes.forEach((c, i) => texts.set(digests[i], c.state));
  // A change caused by an event of an aggregate erased meanwhile (the lane read it before the
  // erasure committed) is logged with the erased state instead (erasure-steps.ts), so that text is at hand.
  texts.set(ERASED_STATE_DIGEST, ERASED_STATE);
  const distinct = [...texts.keys()].sort();
  const values = changes
    .map(
      () =>
        '(CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS TEXT))',
    )
    .join(', ');
  const valueParams = changes.flatMap((c, i) => [
    c.position,
    c.aggregateId,
    c.aggregateType,
    c.version,
    digests[i],
    c.timestamp,
    c.traceParent ?? null,
    c.traceState ?? null,
  ]);
  const head = 'tenant_id = ? AND projection_id = ?';
  return [
    { sql: `UPDATE notification_heads SET last_sequence = last_sequence WHERE ${head}`, params: [tenantId, projectionId] },
    {
      sql: `INSERT INTO notification_states (tenant_id, digest, state) VALUES ${distinct.map(() => '(?, ?, ?)').join(', ')}
            ON CONFLICT (tenant_id, digest) DO NOTHING`,
      params: distinct.flatMap((d) => [tenantId, d, texts.get(d)]),
    },
    {
      sql: `INSERT INTO notifications (tenant_id, projection_id, sequence, position, state_key, aggregate_id, aggregate_type, version, state_id, timestamp, created_at, trace_parent, trace_state)
            SELECT h.tenant_id, h.projection_id, h.last_sequence + ROW_NUMBER() OVER (ORDER BY c.column1), c.column1, CAST(? AS TEXT), c.column2, c.column3, c.column4,
                   (SELECT s.state_id FROM notification_states s WHERE s.tenant_id = h.tenant_id AND s.digest =
                      CASE WHEN EXISTS (SELECT 1 FROM streams e WHERE e.tenant_id = h.tenant_id AND e.aggregate_id = c.column2 AND e.erased_at IS NOT NULL)
                      THEN CAST(? AS TEXT) ELSE c.column5 END), c.column6, CAST(? AS BIGINT), c.column7, c.column8
            FROM (VALUES ${values}) AS c
            JOIN notification_heads h ON h.tenant_id = ? AND h.projection_id = ?
            JOIN projections p ON p.tenant_id = h.tenant_id AND p.projection_id = h.projection_id AND (p.active_version = ? OR p.pending_version = ?)
            LEFT JOIN projection_versions pv ON pv.tenant_id = p.tenant_id AND pv.version_id = p.pending_version AND p.pending_version <> ?
            WHERE (pv.target_position IS NULL OR c.column1 <= pv.target_position)`,
      params: [key, ERASED_STATE_DIGEST, now, ...valueParams, tenantId, projectionId, versionId, versionId, versionId],
    },
    {
      sql: `UPDATE notification_heads SET last_sequence = COALESCE((SELECT MAX(sequence) FROM notifications WHERE ${head}), last_sequence) WHERE ${head}`,
      params: [tenantId, projectionId, tenantId, projectionId],
    },
  ];
}

export class SqlNotificationRepository implements NotificationRepository {
  constructor(private readonly db: SqlRunner) {}

  async read(tenantId: string, projectionId: string, afterSequence: number, limit: number) {
    const rows = await this.db.all(
      `SELECT ${N_COLUMNS} FROM ${N_WITH_STATE} WHERE n.tenant_id = ? AND n.projection_id = ? AND n.sequence > ? ORDER BY n.sequence LIMIT ?`,
      [tenantId, projectionId, afterSequence, limit],
    );
    return rows.map(toNotification);
  }

  async head(tenantId: string, projectionId: string): Promise<NotificationHead | null> {
    const [r] = await this.db.all<any>('SELECT * FROM notification_heads WHERE tenant_id = ? AND projection_id = ?', [
      tenantId,
      projectionId,
    ]);
    return r
      ? { lastSequence: Number(r.last_sequence), prunedSequence: Number(r.pruned_sequence), webhookSequence: Number(r.webhook_sequence) }
      : null;
  }

  async headsToPrune(policy: RetentionPolicy) {
    // Sequences are gap-free and retention removes a prefix, so the oldest kept is pruned_sequence + 1.
    // A row goes only when it is both past the newest `keepCount` and older than `removeBefore`.
    const rows = await this.db.all<any>(
      `SELECT h.tenant_id, h.projection_id FROM notification_heads h
       WHERE h.last_sequence - h.pruned_sequence > ?
         AND EXISTS (SELECT 1 FROM notifications n WHERE n.tenant_id = h.tenant_id AND n.projection_id = h.projection_id
                     AND n.sequence = h.pruned_sequence + 1 AND n.created_at < ?)`,
      [policy.keepCount, policy.removeBefore],
    );
    return rows.map((r) => ({ tenantId: r.tenant_id as string, projectionId: r.projection_id as string }));
  }

  async prune(tenantId: string, projectionId: string, policy: RetentionPolicy) {
    const h = await this.head(tenantId, projectionId);
    if (!h) return 0;
    const [aged] = await this.db.all<{ s: number | null }>(
      'SELECT MAX(sequence) AS s FROM notifications WHERE tenant_id = ? AND projection_id = ? AND created_at < ?',
      [tenantId, projectionId, policy.removeBefore],
    );
    // The newest keepCount always stay; of the older ones, those past the age go.
    let bound = Math.min(h.lastSequence - policy.keepCount, Number(aged?.s ?? 0));
    // A projection with a webhook keeps what its deliveries still need, unless the endpoint is
    // suspended: then it pins nothing, and a resume from a removed sequence answers CURSOR_EXPIRED.
    const [p] = await this.db.all<{ webhook_url: string | null; suspended: number | null }>(
      `SELECT webhook_url, (SELECT 1 FROM webhook_suspensions s WHERE s.tenant_id = p.tenant_id AND s.projection_id = p.projection_id) AS suspended
       FROM projections p WHERE tenant_id = ? AND projection_id = ?`,
      [tenantId, projectionId],
    );
    if (p && !p.suspended && p.webhook_url) {
      const [pending] = await this.db.all<{ s: number | null }>(
        "SELECT MIN(sequence) AS s FROM webhook_deliveries WHERE tenant_id = ? AND projection_id = ? AND status IN ('pending', 'waiting')",
        [tenantId, projectionId],
      );
      bound = Math.min(bound, h.webhookSequence, pending?.s == null ? Infinity : Number(pending.s) - 1);
    }
    if (bound <= h.prunedSequence) return h.prunedSequence;
    const states = await this.db.all<{ state_id: number }>(
      'SELECT DISTINCT state_id FROM notifications WHERE tenant_id = ? AND projection_id = ? AND sequence > ? AND sequence <= ?',
      [tenantId, projectionId, h.prunedSequence, bound],
    );
    await this.db.batch([
      {
        sql: 'DELETE FROM notifications WHERE tenant_id = ? AND projection_id = ? AND sequence <= ?',
        params: [tenantId, projectionId, bound],
      },
      {
        sql: 'UPDATE notification_heads SET pruned_sequence = ? WHERE tenant_id = ? AND projection_id = ? AND pruned_sequence < ?',
        params: [bound, tenantId, projectionId, bound],
      },
    ]);
    await forgetUnreferencedStates(
      this.db,
      tenantId,
      states.map((r) => Number(r.state_id)),
    );
    return bound;
  }
}

const GC_CHUNK = 500;

/**
 * Removes the state texts among `stateIds` that no notification refers to any more (by
 * notifications_by_state: a probe each). On PostgreSQL a lane may have just referred to one (its
 * foreign key check holds it): the statement then fails and is retried one state at a time, so
 * the others still go and the referred one stays.
 */
export async function forgetUnreferencedStates(db: SqlRunner, tenantId: string, stateIds: number[]): Promise<void> {
  const sql = (n: number) =>
    `DELETE FROM notification_states WHERE tenant_id = ? AND state_id IN (${Array(n).fill('?').join(', ')})
     AND NOT EXISTS (SELECT 1 FROM notifications n WHERE n.tenant_id = notification_states.tenant_id AND n.state_id = notification_states.state_id)`;
  for (let i = 0; i < stateIds.length; i += GC_CHUNK) {
    const chunk = stateIds.slice(i, i + GC_CHUNK);
    try {
      await db.run(sql(chunk.length), [tenantId, ...chunk]);
    } catch {
      for (const id of chunk) await db.run(sql(1), [tenantId, id]).catch(() => undefined);
    }
  }
}
