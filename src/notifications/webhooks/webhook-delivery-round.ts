import { Injectable, Logger } from '@nestjs/common';
import { takeTurns } from '../../common/take-turns';
import { NotificationRepository } from '../../store/notification-repository.port';
import { WebhookDeliveryQueue } from '../../store/webhook-delivery-queue.port';
import { WebhookEndpointState } from '../../store/webhook-endpoint-state.port';
import { WebhookDelivery } from '../../store/webhook-records';
import { TenantWebhookQuota } from './tenant-webhook-quota.port';
import { WebhookDeliveryAttempt } from './webhook-delivery-attempt';
import { WebhookDispatcherOptions } from './webhook-dispatcher-options';

/** What runs the rounds (DeliveryTick): woken again when a round leaves work, or an attempt ends. */
export interface RoundRunner {
  wake(): void;
}

const ENQUEUE_BATCH = 500;
const deliveryId = (d: WebhookDelivery) => `${d.tenantId}\u0000${d.projectionId}\u0000${d.sequence}`;
const projectionKey = (tenantId: string, projectionId: string) => `${tenantId}\u0000${projectionId}`;

/**
 * One round of the webhook deliveries, run by DeliveryTick (one at a time): notifications become
 * deliveries (one batch per projection per round, within the tenant's pendingDeliveries limit),
 * then the due ones, tenants in turn, are claimed and attempted (WebhookDeliveryAttempt).
 *
 * Tenants take turns: each round offers the free attempt slots in equal shares to the tenants with
 * due deliveries, starting after the tenant served last. Another tenant's next delivery waits for
 * the next free slot, never for one tenant's backlog of thousands (slots held by a receiver that
 * hangs are for a per-tenant cap on attempts in flight). Notifications become deliveries only for
 * projections that were notified (the poll looks at every backlog, for wake-ups lost elsewhere):
 * no scan of every tenant per append.
 */
@Injectable()
export class WebhookDeliveryRound {
  private readonly logger = new Logger('WebhookDispatcher');
  private readonly inFlight = new Set<string>();
  /** Projections with a webhook notified since their last enqueue (or with more left to enqueue). */
  private readonly backlog = new Map<string, { tenantId: string; projectionId: string }>();
  /** Projections at their pendingDeliveries limit with a receiver that is not failing: enqueued again when one of their deliveries ends. */
  private readonly atLimit = new Set<string>();
  /** Set by the poll: the next round also asks the store for every projection with a backlog. */
  private scanBacklog = true;
  /** The tenant served last: the next round's turn starts after it. */
  private lastTenant = '';

  constructor(
    private readonly queue: WebhookDeliveryQueue,
    private readonly endpoints: WebhookEndpointState,
    private readonly notifications: NotificationRepository,
    private readonly attempts: WebhookDeliveryAttempt,
    private readonly options: WebhookDispatcherOptions,
    private readonly tenantQuota: TenantWebhookQuota,
  ) {}

  /** A projection with a webhook has notifications to enqueue (the next round takes them). */
  notified(tenantId: string, projectionId: string): void {
    this.backlog.set(projectionKey(tenantId, projectionId), { tenantId, projectionId });
  }

  /** The poll: the next round also asks the store for every projection with a backlog. */
  scanAllBacklogs(): void {
    this.scanBacklog = true;
  }

  /** `tick` is the one running this round: woken again when there is more, or when an attempt ends. */
  async run(tick: RoundRunner): Promise<void> {
    const now = Date.now();
    await this.enqueueBacklogs(now, tick);
    const room = this.options.concurrency - this.inFlight.size;
    if (room <= 0) return;
    const due = (await this.dueInTurns(now, room, tick)).filter((d) => !this.inFlight.has(deliveryId(d)));
    // A tenant at its webhooksInFlight quota has its deliveries left pending for a later pass (woken when one finishes).
    const slots = await Promise.all(due.map((d) => this.tenantQuota.acquireWebhookSlot(d.tenantId)));
    // Claimed together (on SQLite one group commit for all of them). The claim pushes the next try past this
    // attempt's deadline, so no one else sends it meanwhile.
    const claimed = await Promise.all(due.map((d, i) => (slots[i] ? this.queue.claim(d, now + this.options.timeoutMs + 5_000) : false)));
    due.forEach((d, i) => {
      const release = slots[i];
      if (!release) return;
      if (!claimed[i]) return release();
      const id = deliveryId(d);
      this.inFlight.add(id);
      void this.attempts
        .attempt({ ...d, attempts: d.attempts + 1 })
        .catch((e) => this.logger.warn(`delivery ${d.projectionId}#${d.sequence} failed: ${e instanceof Error ? e.message : e}`))
        .finally(() => {
          release();
          this.inFlight.delete(id);
          const key = projectionKey(d.tenantId, d.projectionId);
          if (this.atLimit.delete(key)) this.backlog.set(key, { tenantId: d.tenantId, projectionId: d.projectionId });
          tick.wake();
        });
    });
  }

  /**
   * Notifications become deliveries: one batch per projection per round (a projection with more
   * stays in the backlog and the round runs again), so a projection that logged 100,000 changes
   * does not keep the others' deliveries waiting until all of its are enqueued.
   */
  private async enqueueBacklogs(now: number, tick: RoundRunner): Promise<void> {
    if (this.scanBacklog) {
      this.scanBacklog = false;
      for (const p of await this.queue.backlogged(100)) this.backlog.set(projectionKey(p.tenantId, p.projectionId), p);
    }
    const projections = [...this.backlog];
    this.backlog.clear();
    let more = false;
    for (const [i, [key, p]] of projections.entries()) {
      try {
        const room = await this.room(key, p.tenantId, p.projectionId, now);
        if (room > 0 && (await this.queue.enqueue(p.tenantId, p.projectionId, room, now)) === room) {
          this.backlog.set(key, p);
          more = true;
        }
      } catch (e) {
        for (const [k, q] of projections.slice(i)) this.backlog.set(k, q); // kept for the next round
        throw e;
      }
    }
    if (more) tick.wake();
  }

  /**
   * How many notifications of the projection may become deliveries now: a batch, within its
   * tenant's pendingDeliveries limit. At the limit with notifications still waiting, an endpoint
   * whose receiver is failing is suspended (its backlog would only grow: deliveries stop, its
   * pending ones are dropped, the log no longer waits for it; an operator resumes it); one that is
   * merely busy waits (back-pressure) and is looked at again when one of its deliveries ends.
   */
  private async room(key: string, tenantId: string, projectionId: string, now: number): Promise<number> {
    const limit = await this.tenantQuota.pendingDeliveries(tenantId);
    if (limit === 0) return ENQUEUE_BATCH;
    if (await this.endpoints.suspension(tenantId, projectionId)) return 0;
    const pending = await this.endpoints.pendingCount(tenantId, projectionId, limit);
    if (pending < limit) return Math.min(ENQUEUE_BATCH, limit - pending);
    const head = await this.notifications.head(tenantId, projectionId);
    if (!head || head.lastSequence <= head.webhookSequence) return 0;
    if (await this.endpoints.pendingFailing(tenantId, projectionId)) {
      const s = await this.endpoints.suspend(
        tenantId,
        projectionId,
        `PENDING_LIMIT: ${limit} deliveries were waiting (the tenant's pendingDeliveries limit) with more to come, and the receiver is failing`,
        now,
      );
      this.atLimit.delete(key);
      this.logger.warn(
        `webhook of projection ${projectionId} (tenant ${tenantId}) suspended at ${limit} pending deliveries; resume from sequence ${s.resumeSequence}`,
      );
    } else {
      this.atLimit.add(key);
    }
    return 0;
  }

  /**
   * Due deliveries for `room` free slots, tenants in turn: the tenants with due deliveries after
   * the one served last (wrapping round), each offered an equal share; the deliveries interleaved
   * tenant by tenant. Room a tenant did not need is offered again by the next round, at once.
   */
  private async dueInTurns(now: number, room: number, tick: RoundRunner): Promise<WebhookDelivery[]> {
    const tenants = await this.queue.tenantsWithDue(now, this.lastTenant, room);
    if (tenants.length === 0) return [];
    const share = Math.ceil(room / tenants.length);
    const byTenant = new Map<string, WebhookDelivery[]>(tenants.map((t) => [t, []]));
    for (const d of await this.queue.dueOfTenants(tenants, now, share)) byTenant.get(d.tenantId)?.push(d);
    const lists = [...byTenant.values()];
    const due = takeTurns(lists, room);
    if (due.length > 0) this.lastTenant = due[due.length - 1].tenantId;
    if (due.length < room && lists.some((l) => l.length >= share)) tick.wake();
    return due;
  }
}
