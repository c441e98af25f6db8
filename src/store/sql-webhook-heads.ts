import { WebhookDelivery } from './webhook-records';

/*
 * Heads. A key's deliveries go out one at a time, in sequence order: only the first undelivered
 * one of a key (its head) is stored 'pending', the ones behind it 'waiting'. Three writes move
 * heads: an enqueue makes its new rows heads when their key has nothing undelivered before them;
 * a completion (delivered, dead-lettered) makes the next waiting row of its key the head; a replay
 * re-heads the projection. Each of these is a check-then-write over rows of the key that another
 * instance may be writing at the same moment, and under READ COMMITTED each statement sees only
 * what committed before it began: an enqueue that still saw the old head pending (its completion
 * not committed) left its new row waiting, while the completion, not seeing the enqueue's
 * uncommitted row, found nothing to promote; both committed and the key stopped for good (issue
 * 23: 19 % of deliveries stuck). One statement cannot see another transaction's uncommitted row,
 * so the decisions are serialised instead: every write that decides a key's head first takes a
 * lock (sql-dialect.ts, webhookProjectionLock / webhookKeyLock) — the enqueue and the replay the
 * projection's exclusive lock, a completion the projection's shared lock and its key's lock — and
 * its statements run after the lock is granted, so each sees what the other committed. The cost:
 * one lock statement per enqueue batch, two per completion (not per retry: a retried head stays
 * the head); completions of different keys still run side by side. SQLite writes one transaction
 * at a time and each sees all earlier commits: the same rule holds with no lock.
 *
 * Anything that still leaves a key headless (a bug, a manual edit, rows of the old code) is found
 * by headlessKeys and mended by repairHead (WebhookDispatcher's repair sweep).
 */

/** An undelivered delivery of the same key before `d` (by webhook_deliveries_key_order: two probes). */
export const EARLIER_OF_KEY = `EXISTS (SELECT 1 FROM webhook_deliveries e
  WHERE e.tenant_id = webhook_deliveries.tenant_id AND e.projection_id = webhook_deliveries.projection_id
    AND e.state_key = webhook_deliveries.state_key AND e.status IN ('pending', 'waiting') AND e.sequence < webhook_deliveries.sequence)`;

/** The key of `w` has a head (by webhook_deliveries_key_order: one probe). */
export const HEAD_OF_KEY = (w: string) => `EXISTS (SELECT 1 FROM webhook_deliveries h
  WHERE h.tenant_id = ${w}.tenant_id AND h.projection_id = ${w}.projection_id AND h.state_key = ${w}.state_key AND h.status = 'pending')`;

/**
 * After a key's head was delivered or dead-lettered: its next waiting delivery becomes the head
 * (unless a replay already made an earlier one pending). Runs under the key's lock.
 */
export function promoteNextOfKey(d: WebhookDelivery) {
  return {
    sql: `UPDATE webhook_deliveries SET status = 'pending'
          WHERE tenant_id = ? AND projection_id = ? AND state_key = ? AND status = 'waiting'
            AND sequence = (SELECT MIN(sequence) FROM webhook_deliveries WHERE tenant_id = ? AND projection_id = ? AND state_key = ? AND status = 'waiting')
            AND NOT ${EARLIER_OF_KEY}`,
    params: [d.tenantId, d.projectionId, d.stateKey, d.tenantId, d.projectionId, d.stateKey],
  };
}
