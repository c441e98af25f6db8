import { webhookKeyLock, webhookProjectionLock } from './sql-dialect';
import { SqlRunner } from './sql-runner';
import { EARLIER_OF_KEY, HEAD_OF_KEY, promoteNextOfKey } from './sql-webhook-heads';
import { WebhookDeliveryLog } from './webhook-delivery-log.port';
import { WebhookDeliveryQueue } from './webhook-delivery-queue.port';
import { WebhookDeliveryRetention } from './webhook-delivery-retention.port';
import { WebhookEndpointState } from './webhook-endpoint-state.port';
import { WebhookHeadRepair } from './webhook-head-repair.port';
import { DeliveryStatus, HeadlessKey, WebhookDelivery, WebhookSecretRecord, WebhookSuspension } from './webhook-records';
import { WebhookSecretStore } from './webhook-secret-store.port';

const n = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function toSecret(r: any): WebhookSecretRecord {
  return {
    secret: r.secret,
    previousSecret: r.previous_secret ?? null,
    previousUntil: n(r.previous_until),
    rotatedAt: Number(r.rotated_at),
  };
}

function toDelivery(r: any): WebhookDelivery {
  return {
    tenantId: r.tenant_id,
    projectionId: r.projection_id,
    sequence: Number(r.sequence),
    stateKey: r.state_key,
    // 'waiting' (behind its key's head) is stored apart only so the due query can skip it; it is pending.
    status: r.status === 'waiting' ? 'pending' : r.status,
    attempts: Number(r.attempts),
    nextAttemptAt: Number(r.next_attempt_at),
    lastError: r.last_error ?? null,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

const PK = 'tenant_id = ? AND projection_id = ? AND sequence = ?';
const pk = (d: WebhookDelivery) => [d.tenantId, d.projectionId, d.sequence];

/**
 * Every webhook role (the ports beside it) over one SqlRunner, for both adapters (store.webhooks);
 * the head rule its writes keep is in sql-webhook-heads.ts.
 */
export class SqlWebhookRepository
  implements WebhookSecretStore, WebhookDeliveryQueue, WebhookHeadRepair, WebhookEndpointState, WebhookDeliveryLog, WebhookDeliveryRetention
{
  constructor(private readonly db: SqlRunner) {}

  async getSecret(tenantId: string, scope: string) {
    const [r] = await this.db.all('SELECT * FROM webhook_secrets WHERE tenant_id = ? AND scope = ?', [tenantId, scope]);
    return r ? toSecret(r) : null;
  }

  async ensureSecret(tenantId: string, scope: string, secret: string, now: number) {
    await this.db.run('INSERT INTO webhook_secrets (tenant_id, scope, secret, rotated_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING', [
      tenantId,
      scope,
      secret,
      now,
    ]);
    return (await this.getSecret(tenantId, scope))!;
  }

  async replaceSecret(tenantId: string, scope: string, secret: string, now: number, overlapUntil: number) {
    await this.db.batch([
      {
        sql: 'INSERT INTO webhook_secrets (tenant_id, scope, secret, rotated_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
        params: [tenantId, scope, secret, now],
      },
      {
        sql: `UPDATE webhook_secrets SET previous_secret = secret, previous_until = ?, secret = ?, rotated_at = ?
              WHERE tenant_id = ? AND scope = ? AND secret <> ?`,
        params: [overlapUntil, secret, now, tenantId, scope, secret],
      },
    ]);
    return (await this.getSecret(tenantId, scope))!;
  }

  async startDeliveriesNow(tenantId: string, projectionId: string) {
    await this.db.run('UPDATE notification_heads SET webhook_sequence = last_sequence WHERE tenant_id = ? AND projection_id = ?', [
      tenantId,
      projectionId,
    ]);
  }

  async backlogged(limit: number) {
    const rows = await this.db.all<any>(
      `SELECT h.tenant_id, h.projection_id FROM notification_heads h
       JOIN projections p ON p.tenant_id = h.tenant_id AND p.projection_id = h.projection_id
       WHERE h.last_sequence > h.webhook_sequence AND p.webhook_url IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM webhook_suspensions s WHERE s.tenant_id = h.tenant_id AND s.projection_id = h.projection_id)
       LIMIT ?`,
      [limit],
    );
    return rows.map((r) => ({ tenantId: r.tenant_id as string, projectionId: r.projection_id as string }));
  }

  async enqueue(tenantId: string, projectionId: string, limit: number, now: number) {
    const head = 'tenant_id = ? AND projection_id = ?';
    const before = await this.db.all<{ w: number }>(`SELECT webhook_sequence AS w FROM notification_heads WHERE ${head}`, [
      tenantId,
      projectionId,
    ]);
    // The projection's heads lock first (no completion of it runs meanwhile: see "Heads"; before
    // the counter row, which lane runs lock, so that they never wait behind a completion), then the
    // counter row: no notification commits meanwhile, so the cursor moves exactly over the rows
    // inserted (sequences are gap-free).
    await this.db.batch([
      ...webhookProjectionLock(this.db.dialect, tenantId, projectionId, 'exclusive'),
      { sql: `UPDATE notification_heads SET webhook_sequence = webhook_sequence WHERE ${head}`, params: [tenantId, projectionId] },
      {
        sql: `INSERT INTO webhook_deliveries (tenant_id, projection_id, sequence, state_key, status, attempts, next_attempt_at, created_at, updated_at)
              SELECT n.tenant_id, n.projection_id, n.sequence, n.state_key, 'waiting', 0, CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT)
              FROM notifications n JOIN notification_heads h ON h.tenant_id = n.tenant_id AND h.projection_id = n.projection_id
              WHERE n.tenant_id = ? AND n.projection_id = ? AND n.sequence > h.webhook_sequence AND n.sequence <= h.webhook_sequence + ?
                AND NOT EXISTS (SELECT 1 FROM webhook_suspensions s WHERE s.tenant_id = n.tenant_id AND s.projection_id = n.projection_id)
              ON CONFLICT DO NOTHING`,
        params: [now, now, now, tenantId, projectionId, limit],
      },
      {
        sql: `UPDATE notification_heads SET webhook_sequence = CASE WHEN last_sequence < webhook_sequence + ? THEN last_sequence ELSE webhook_sequence + ? END
              WHERE ${head}`,
        params: [limit, limit, tenantId, projectionId],
      },
      // The new rows (all after the cursor's old place) that are first of their key become heads.
      {
        sql: `UPDATE webhook_deliveries SET status = 'pending'
              WHERE tenant_id = ? AND projection_id = ? AND sequence > ? AND status = 'waiting' AND NOT ${EARLIER_OF_KEY}`,
        params: [tenantId, projectionId, Number(before[0]?.w ?? 0)],
      },
    ]);
    const [after] = await this.db.all<{ w: number }>(`SELECT webhook_sequence AS w FROM notification_heads WHERE ${head}`, [
      tenantId,
      projectionId,
    ]);
    return after ? Number(after.w) - Number(before[0]?.w ?? 0) : 0;
  }

  async tenantsWithDue(now: number, after: string, limit: number) {
    const from = await this.tenantsWithDueAfter(now, after, limit);
    if (from.length >= limit || after === '') return from;
    // Round the turn: the tenants from the start up to `after`.
    const wrapped = (await this.tenantsWithDueAfter(now, '', limit - from.length)).filter((t) => t <= after);
    return [...from, ...wrapped];
  }

  /** A loose index walk (webhook_deliveries_by_tenant): one seek per tenant with pending deliveries. */
  private async tenantsWithDueAfter(now: number, after: string, limit: number): Promise<string[]> {
    const next = (than: string) =>
      `(SELECT d.tenant_id FROM webhook_deliveries d WHERE d.status = 'pending' AND d.tenant_id > ${than} ORDER BY d.tenant_id LIMIT 1)`;
    const rows = await this.db.all<{ tenant_id: string }>(
      `WITH RECURSIVE t(tenant_id) AS (
         SELECT ${next('?')}
         UNION ALL
         SELECT ${next('t.tenant_id')} FROM t WHERE t.tenant_id IS NOT NULL
       )
       SELECT tenant_id FROM t
       WHERE tenant_id IS NOT NULL
         AND EXISTS (SELECT 1 FROM webhook_deliveries e WHERE e.status = 'pending' AND e.tenant_id = t.tenant_id AND e.next_attempt_at <= ?)
       LIMIT ?`,
      [after, now, limit],
    );
    return rows.map((r) => r.tenant_id);
  }

  async dueOfTenants(tenantIds: string[], now: number, perTenant: number) {
    if (tenantIds.length === 0) return [];
    // Only heads of their key are 'pending' (the rest wait), so this walks webhook_deliveries_by_tenant
    // in due order and stops after `perTenant` rows, however many deliveries wait behind them.
    const one = (i: number) =>
      `SELECT * FROM (SELECT d.* FROM webhook_deliveries d
         WHERE d.status = 'pending' AND d.tenant_id = ? AND d.next_attempt_at <= ?
         ORDER BY d.next_attempt_at, d.sequence LIMIT ?) AS due_${i}`;
    const rows = await this.db.all(
      tenantIds.map((_, i) => one(i)).join('\nUNION ALL\n'),
      tenantIds.flatMap((t) => [t, now, perTenant]),
    );
    return rows.map(toDelivery);
  }

  async claim(d: WebhookDelivery, until: number) {
    const changed = await this.db.run(
      `UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_at = ? WHERE ${PK} AND status = 'pending' AND next_attempt_at = ?`,
      [until, ...pk(d), d.nextAttemptAt],
    );
    return changed > 0;
  }

  async delivered(d: WebhookDelivery, now: number) {
    // Also for a row made again since (a resume): the receiver did get this sequence.
    await this.db.batch([
      ...webhookKeyLock(this.db.dialect, d.tenantId, d.projectionId, d.stateKey),
      { sql: `UPDATE webhook_deliveries SET status = 'delivered', last_error = NULL, updated_at = ? WHERE ${PK}`, params: [now, ...pk(d)] },
      promoteNextOfKey(d),
    ]);
  }

  // A failure is written only to the row its attempt was made for: a suspension drops pending rows
  // and a resume makes them again under the same sequence, and an attempt still under way from
  // before (to the receiver that was down) must not mark the new row failing — that suspended the
  // endpoint again at once. created_at tells the rows apart; nothing of the batch is kept otherwise.
  async attemptFailed(d: WebhookDelivery, error: string, retryAt: number | null, now: number) {
    const update = {
      sql: `UPDATE webhook_deliveries SET status = ?, next_attempt_at = ?, last_error = ?, updated_at = ? WHERE ${PK} AND status = 'pending' AND created_at = ?`,
      params: [retryAt === null ? 'dead' : 'pending', retryAt ?? now, error.slice(0, 1000), now, ...pk(d), d.createdAt],
      mustChange: true,
    };
    // A retry leaves the head where it is (no lock); a dead letter moves it (the key's lock, see "Heads").
    await this.db.batch(
      retryAt === null
        ? [...webhookKeyLock(this.db.dialect, d.tenantId, d.projectionId, d.stateKey), update, promoteNextOfKey(d)]
        : [update],
    );
  }

  async list(tenantId: string, projectionId: string, opts: { status?: DeliveryStatus; afterSequence: number; limit: number }) {
    const rows = await this.db.all(
      `SELECT * FROM webhook_deliveries WHERE tenant_id = ? AND projection_id = ? AND sequence > ?
       ${opts.status === 'pending' ? "AND status IN ('pending', 'waiting')" : opts.status ? 'AND status = ?' : ''}
       ORDER BY sequence LIMIT ?`,
      [tenantId, projectionId, opts.afterSequence, ...(opts.status && opts.status !== 'pending' ? [opts.status] : []), opts.limit],
    );
    return rows.map(toDelivery);
  }

  async replay(tenantId: string, projectionId: string, sequence: number | null, now: number, afterSequence = 0) {
    const scope = 'tenant_id = ? AND projection_id = ?';
    const chosen = `${scope} AND status = 'dead' AND sequence > ? ${sequence === null ? '' : 'AND sequence = ?'}`;
    const params = [tenantId, projectionId, afterSequence, ...(sequence === null ? [] : [sequence])];
    const [r] = await this.db.all<{ n: number }>(`SELECT count(*) AS n FROM webhook_deliveries WHERE ${chosen}`, params);
    if (Number(r?.n ?? 0) === 0) return 0;
    // Under the projection's heads lock, in one transaction (no half-headed state is ever seen): the
    // replayed deliveries wait first; then one head per key again — a replayed delivery earlier than
    // its key's head becomes the head (the key waits for it), one later than it waits. Visits the
    // projection's heads and waiting rows: an operator's action, not a per-tick cost.
    await this.db.batch([
      ...webhookProjectionLock(this.db.dialect, tenantId, projectionId, 'exclusive'),
      {
        sql: `UPDATE webhook_deliveries SET status = 'waiting', attempts = 0, next_attempt_at = ?, updated_at = ? WHERE ${chosen}`,
        params: [now, now, ...params],
      },
      {
        sql: `UPDATE webhook_deliveries SET status = 'waiting' WHERE ${scope} AND status = 'pending' AND ${EARLIER_OF_KEY}`,
        params: [tenantId, projectionId],
      },
      {
        sql: `UPDATE webhook_deliveries SET status = 'pending' WHERE ${scope} AND status = 'waiting' AND NOT ${EARLIER_OF_KEY}`,
        params: [tenantId, projectionId],
      },
    ]);
    return Number(r.n);
  }

  async headlessKeys(limit: number): Promise<HeadlessKey[]> {
    // Every waiting row, three index probes each (webhook_deliveries_key_order): O(deliveries
    // waiting), for a sweep every few seconds. In any committed state this finds nothing unless
    // something broke the head rule.
    const rows = await this.db.all<any>(
      `SELECT w.tenant_id, w.projection_id, w.state_key, w.sequence FROM webhook_deliveries w
       WHERE w.status = 'waiting'
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e
                         WHERE e.tenant_id = w.tenant_id AND e.projection_id = w.projection_id AND e.state_key = w.state_key
                           AND e.status IN ('pending', 'waiting') AND e.sequence < w.sequence)
         AND NOT ${HEAD_OF_KEY('w')}
       LIMIT ?`,
      [limit],
    );
    return rows.map((r) => ({ tenantId: r.tenant_id, projectionId: r.projection_id, stateKey: r.state_key, sequence: Number(r.sequence) }));
  }

  async repairHead(k: HeadlessKey) {
    // Checked again under the key's lock: another instance's sweep, or a completion, may have given
    // the key its head since headlessKeys read it.
    return this.db.batch([
      ...webhookKeyLock(this.db.dialect, k.tenantId, k.projectionId, k.stateKey),
      {
        sql: `UPDATE webhook_deliveries SET status = 'pending'
              WHERE ${PK} AND state_key = ? AND status = 'waiting' AND NOT ${EARLIER_OF_KEY} AND NOT ${HEAD_OF_KEY('webhook_deliveries')}`,
        params: [k.tenantId, k.projectionId, k.sequence, k.stateKey],
        mustChange: true,
      },
    ]);
  }

  async forgetDelivered(before: number) {
    return this.db.run("DELETE FROM webhook_deliveries WHERE status = 'delivered' AND updated_at < ?", [before]);
  }

  async forgetDead(before: number) {
    return this.db.run("DELETE FROM webhook_deliveries WHERE status = 'dead' AND updated_at < ?", [before]);
  }

  async countDead(tenantId: string, projectionId: string, atOrBelow: number) {
    const [r] = await this.db.all<{ n: number }>(
      "SELECT count(*) AS n FROM webhook_deliveries WHERE tenant_id = ? AND projection_id = ? AND status = 'dead' AND sequence <= ?",
      [tenantId, projectionId, atOrBelow],
    );
    return Number(r?.n ?? 0);
  }

  async pendingCount(tenantId: string, projectionId: string, cap: number) {
    const [r] = await this.db.all<{ n: number }>(
      // Heads and the deliveries waiting behind them: all are pending to the API and the limit.
      `SELECT count(*) AS n FROM (SELECT 1 FROM webhook_deliveries WHERE tenant_id = ? AND projection_id = ? AND status IN ('pending', 'waiting') LIMIT ?) AS p`,
      [tenantId, projectionId, cap],
    );
    return Number(r?.n ?? 0);
  }

  async pendingFailing(tenantId: string, projectionId: string) {
    const rows = await this.db.all(
      "SELECT 1 FROM webhook_deliveries WHERE tenant_id = ? AND projection_id = ? AND status = 'pending' AND last_error IS NOT NULL LIMIT 1",
      [tenantId, projectionId],
    );
    return rows.length > 0;
  }

  async suspension(tenantId: string, projectionId: string): Promise<WebhookSuspension | null> {
    const [r] = await this.db.all<any>('SELECT * FROM webhook_suspensions WHERE tenant_id = ? AND projection_id = ?', [
      tenantId,
      projectionId,
    ]);
    return r ? { resumeSequence: Number(r.resume_sequence), reason: r.reason, suspendedAt: Number(r.suspended_at) } : null;
  }

  async suspend(tenantId: string, projectionId: string, reason: string, now: number) {
    const head = 'tenant_id = ? AND projection_id = ?';
    // The counter row first, as enqueue does: no enqueue of the projection runs between the two.
    await this.db.batch([
      { sql: `UPDATE notification_heads SET webhook_sequence = webhook_sequence WHERE ${head}`, params: [tenantId, projectionId] },
      {
        sql: `INSERT INTO webhook_suspensions (tenant_id, projection_id, resume_sequence, reason, suspended_at)
              SELECT h.tenant_id, h.projection_id,
                     COALESCE((SELECT MIN(d.sequence) FROM webhook_deliveries d
                               WHERE d.tenant_id = h.tenant_id AND d.projection_id = h.projection_id AND d.status IN ('pending', 'waiting')), h.webhook_sequence + 1),
                     ?, CAST(? AS BIGINT)
              FROM notification_heads h WHERE h.tenant_id = ? AND h.projection_id = ?
              ON CONFLICT DO NOTHING`,
        params: [reason.slice(0, 1000), now, tenantId, projectionId],
      },
      { sql: `DELETE FROM webhook_deliveries WHERE ${head} AND status IN ('pending', 'waiting')`, params: [tenantId, projectionId] },
    ]);
    return (await this.suspension(tenantId, projectionId))!;
  }

  async resume(tenantId: string, projectionId: string, afterSequence: number) {
    const head = 'tenant_id = ? AND projection_id = ?';
    return this.db.batch([
      { sql: `DELETE FROM webhook_suspensions WHERE ${head}`, params: [tenantId, projectionId], mustChange: true },
      { sql: `UPDATE notification_heads SET webhook_sequence = ? WHERE ${head}`, params: [afterSequence, tenantId, projectionId] },
    ]);
  }
}
