import { WebhookDeliveryLog } from '../webhook-delivery-log.port';
import { WebhookDeliveryQueue } from '../webhook-delivery-queue.port';
import { WebhookDeliveryRetention } from '../webhook-delivery-retention.port';
import { WebhookEndpointState } from '../webhook-endpoint-state.port';
import { WebhookHeadRepair } from '../webhook-head-repair.port';
import { DeliveryStatus, HeadlessKey, WebhookDelivery, WebhookSecretRecord, WebhookSuspension } from '../webhook-records';
import { WebhookSecretStore } from '../webhook-secret-store.port';
import { InMemoryNotificationLog } from './in-memory-notification-log';

/** A stored delivery; 'waiting' is a pending delivery behind its key's head, as in SQL. */
type Row = Omit<WebhookDelivery, 'status'> & { status: DeliveryStatus | 'waiting' };

const id = (tenantId: string, projectionId: string) => `${tenantId}\u0000${projectionId}`;
const rowId = (tenantId: string, projectionId: string, sequence: number) => `${tenantId}\u0000${projectionId}\u0000${sequence}`;
const undelivered = (r: Row) => r.status === 'pending' || r.status === 'waiting';
const toDelivery = (r: Row): WebhookDelivery => ({ ...r, status: r.status === 'waiting' ? 'pending' : r.status });

/**
 * Every webhook role in memory, over an InMemoryNotificationLog: the same rules as
 * SqlWebhookRepository (sql-webhook-heads.ts, "Heads": one pending head per key, the rest
 * waiting) and the same answers, proved by the webhook store conformance suite
 * (test/store/webhook-store.conformance.ts). For unit tests; one process, so no locks.
 */
export class InMemoryWebhookRepository
  implements WebhookSecretStore, WebhookDeliveryQueue, WebhookHeadRepair, WebhookEndpointState, WebhookDeliveryLog, WebhookDeliveryRetention
{
  private readonly rows = new Map<string, Row>();
  private readonly secrets = new Map<string, WebhookSecretRecord>();
  private readonly suspensions = new Map<string, WebhookSuspension>();

  constructor(readonly log: InMemoryNotificationLog) {}

  async getSecret(tenantId: string, scope: string) {
    const s = this.secrets.get(id(tenantId, scope));
    return s ? { ...s } : null;
  }

  async ensureSecret(tenantId: string, scope: string, secret: string, now: number) {
    if (!this.secrets.has(id(tenantId, scope)))
      this.secrets.set(id(tenantId, scope), { secret, previousSecret: null, previousUntil: null, rotatedAt: now });
    return (await this.getSecret(tenantId, scope))!;
  }

  async replaceSecret(tenantId: string, scope: string, secret: string, now: number, overlapUntil: number) {
    const before = this.secrets.get(id(tenantId, scope));
    if (!before) this.secrets.set(id(tenantId, scope), { secret, previousSecret: null, previousUntil: null, rotatedAt: now });
    else if (before.secret !== secret)
      this.secrets.set(id(tenantId, scope), { secret, previousSecret: before.secret, previousUntil: overlapUntil, rotatedAt: now });
    return (await this.getSecret(tenantId, scope))!;
  }

  async startDeliveriesNow(tenantId: string, projectionId: string) {
    const head = this.log.headOf(tenantId, projectionId);
    if (head) head.webhookSequence = head.lastSequence;
  }

  async backlogged(limit: number) {
    const found: { tenantId: string; projectionId: string }[] = [];
    for (const h of this.log.allHeads()) {
      if (found.length >= limit) break;
      if (h.head.lastSequence > h.head.webhookSequence && h.webhookUrl !== null && !this.suspensions.has(id(h.tenantId, h.projectionId)))
        found.push({ tenantId: h.tenantId, projectionId: h.projectionId });
    }
    return found;
  }

  async enqueue(tenantId: string, projectionId: string, limit: number, now: number) {
    const head = this.log.headOf(tenantId, projectionId);
    if (!head) return 0;
    const before = head.webhookSequence;
    if (!this.suspensions.has(id(tenantId, projectionId))) {
      for (const n of await this.log.read(tenantId, projectionId, before, limit)) {
        const k = rowId(tenantId, projectionId, n.sequence);
        if (this.rows.has(k)) continue;
        this.rows.set(k, {
          tenantId,
          projectionId,
          sequence: n.sequence,
          stateKey: n.stateKey,
          status: 'waiting',
          attempts: 0,
          nextAttemptAt: now,
          lastError: null,
          createdAt: now,
          updatedAt: now,
        });
      }
    }
    head.webhookSequence = Math.min(head.lastSequence, before + limit);
    // The new rows that are first of their key become heads (decided on the rows as they were).
    const heads = this.ofProjection(tenantId, projectionId).filter(
      (r) => r.sequence > before && r.status === 'waiting' && !this.earlierOfKey(r),
    );
    for (const r of heads) r.status = 'pending';
    return head.webhookSequence - before;
  }

  async tenantsWithDue(now: number, after: string, limit: number) {
    const from = this.tenantsWithDueAfter(now, after, limit);
    if (from.length >= limit || after === '') return from;
    const wrapped = this.tenantsWithDueAfter(now, '', limit - from.length).filter((t) => t <= after);
    return [...from, ...wrapped];
  }

  private tenantsWithDueAfter(now: number, after: string, limit: number): string[] {
    const due = new Set<string>();
    for (const r of this.rows.values()) if (r.status === 'pending' && r.nextAttemptAt <= now && r.tenantId > after) due.add(r.tenantId);
    return [...due].sort().slice(0, limit);
  }

  async dueOfTenants(tenantIds: string[], now: number, perTenant: number) {
    return tenantIds.flatMap((t) =>
      [...this.rows.values()]
        .filter((r) => r.status === 'pending' && r.tenantId === t && r.nextAttemptAt <= now)
        .sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || a.sequence - b.sequence)
        .slice(0, perTenant)
        .map(toDelivery),
    );
  }

  async claim(d: WebhookDelivery, until: number) {
    const r = this.rows.get(rowId(d.tenantId, d.projectionId, d.sequence));
    if (!r || r.status !== 'pending' || r.nextAttemptAt !== d.nextAttemptAt) return false;
    r.attempts++;
    r.nextAttemptAt = until;
    return true;
  }

  async delivered(d: WebhookDelivery, now: number) {
    const r = this.rows.get(rowId(d.tenantId, d.projectionId, d.sequence));
    if (r) Object.assign(r, { status: 'delivered', lastError: null, updatedAt: now });
    this.promoteNextOfKey(d);
  }

  async attemptFailed(d: WebhookDelivery, error: string, retryAt: number | null, now: number) {
    const r = this.rows.get(rowId(d.tenantId, d.projectionId, d.sequence));
    // Only the row the attempt was made for (a resume makes the sequence again, created anew).
    if (!r || r.status !== 'pending' || r.createdAt !== d.createdAt) return;
    Object.assign(r, {
      status: retryAt === null ? 'dead' : 'pending',
      nextAttemptAt: retryAt ?? now,
      lastError: error.slice(0, 1000),
      updatedAt: now,
    });
    if (retryAt === null) this.promoteNextOfKey(d);
  }

  async list(tenantId: string, projectionId: string, opts: { status?: DeliveryStatus; afterSequence: number; limit: number }) {
    return this.ofProjection(tenantId, projectionId)
      .filter((r) => r.sequence > opts.afterSequence)
      .filter((r) => (opts.status === 'pending' ? undelivered(r) : opts.status ? r.status === opts.status : true))
      .slice(0, opts.limit)
      .map(toDelivery);
  }

  async replay(tenantId: string, projectionId: string, sequence: number | null, now: number, afterSequence = 0) {
    const chosen = this.ofProjection(tenantId, projectionId).filter(
      (r) => r.status === 'dead' && r.sequence > afterSequence && (sequence === null || r.sequence === sequence),
    );
    if (chosen.length === 0) return 0;
    for (const r of chosen) Object.assign(r, { status: 'waiting', attempts: 0, nextAttemptAt: now, updatedAt: now });
    // One head per key again, each step decided on the rows as the step before left them.
    const demoted = this.ofProjection(tenantId, projectionId).filter((r) => r.status === 'pending' && this.earlierOfKey(r));
    for (const r of demoted) r.status = 'waiting';
    const heads = this.ofProjection(tenantId, projectionId).filter((r) => r.status === 'waiting' && !this.earlierOfKey(r));
    for (const r of heads) r.status = 'pending';
    return chosen.length;
  }

  async headlessKeys(limit: number): Promise<HeadlessKey[]> {
    return [...this.rows.values()]
      .filter((w) => w.status === 'waiting' && !this.earlierOfKey(w) && !this.headOfKey(w))
      .slice(0, limit)
      .map((w) => ({ tenantId: w.tenantId, projectionId: w.projectionId, stateKey: w.stateKey, sequence: w.sequence }));
  }

  async repairHead(k: HeadlessKey) {
    const r = this.rows.get(rowId(k.tenantId, k.projectionId, k.sequence));
    if (!r || r.stateKey !== k.stateKey || r.status !== 'waiting' || this.earlierOfKey(r) || this.headOfKey(r)) return false;
    r.status = 'pending';
    return true;
  }

  async forgetDelivered(before: number) {
    return this.forget('delivered', before);
  }

  async forgetDead(before: number) {
    return this.forget('dead', before);
  }

  private forget(status: DeliveryStatus, before: number): number {
    let n = 0;
    for (const [k, r] of this.rows) if (r.status === status && r.updatedAt < before && this.rows.delete(k)) n++;
    return n;
  }

  async countDead(tenantId: string, projectionId: string, atOrBelow: number) {
    return this.ofProjection(tenantId, projectionId).filter((r) => r.status === 'dead' && r.sequence <= atOrBelow).length;
  }

  async pendingCount(tenantId: string, projectionId: string, cap: number) {
    return Math.min(cap, this.ofProjection(tenantId, projectionId).filter(undelivered).length);
  }

  async pendingFailing(tenantId: string, projectionId: string) {
    return this.ofProjection(tenantId, projectionId).some((r) => r.status === 'pending' && r.lastError !== null);
  }

  async suspension(tenantId: string, projectionId: string) {
    const s = this.suspensions.get(id(tenantId, projectionId));
    return s ? { ...s } : null;
  }

  async suspend(tenantId: string, projectionId: string, reason: string, now: number) {
    const head = this.log.headOf(tenantId, projectionId);
    const open = this.ofProjection(tenantId, projectionId).filter(undelivered);
    if (head && !this.suspensions.has(id(tenantId, projectionId))) {
      const resumeSequence = open.length > 0 ? Math.min(...open.map((r) => r.sequence)) : head.webhookSequence + 1;
      this.suspensions.set(id(tenantId, projectionId), { resumeSequence, reason: reason.slice(0, 1000), suspendedAt: now });
    }
    for (const r of open) this.rows.delete(rowId(r.tenantId, r.projectionId, r.sequence));
    return (await this.suspension(tenantId, projectionId))!;
  }

  async resume(tenantId: string, projectionId: string, afterSequence: number) {
    if (!this.suspensions.delete(id(tenantId, projectionId))) return false;
    const head = this.log.headOf(tenantId, projectionId);
    if (head) head.webhookSequence = afterSequence;
    return true;
  }

  /** The projection's rows in sequence order. */
  private ofProjection(tenantId: string, projectionId: string): Row[] {
    return [...this.rows.values()]
      .filter((r) => r.tenantId === tenantId && r.projectionId === projectionId)
      .sort((a, b) => a.sequence - b.sequence);
  }

  /** An undelivered delivery of the same key before `r` (EARLIER_OF_KEY). */
  private earlierOfKey(r: Row): boolean {
    return this.ofProjection(r.tenantId, r.projectionId).some(
      (e) => e.stateKey === r.stateKey && undelivered(e) && e.sequence < r.sequence,
    );
  }

  /** The key of `r` has a head (HEAD_OF_KEY). */
  private headOfKey(r: Row): boolean {
    return this.ofProjection(r.tenantId, r.projectionId).some((h) => h.stateKey === r.stateKey && h.status === 'pending');
  }

  /** After a key's head was delivered or dead-lettered: its next waiting delivery becomes the head (promoteNextOfKey). */
  private promoteNextOfKey(d: WebhookDelivery): void {
    const waiting = this.ofProjection(d.tenantId, d.projectionId).filter((r) => r.stateKey === d.stateKey && r.status === 'waiting');
    if (waiting.length > 0 && !this.earlierOfKey(waiting[0])) waiting[0].status = 'pending';
  }
}
