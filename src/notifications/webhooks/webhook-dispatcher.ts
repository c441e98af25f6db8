import { Logger } from '@nestjs/common';
import { LruMap } from '../../common/lru-map';
import { SerialRunner } from '../../common/serial-runner';
import { takeTurns } from '../../common/take-turns';
import { NotificationRepository } from '../../store/notification-repository.port';
import { ProjectionCatalogRepository } from '../../store/projection-catalog.port';
import { WebhookDelivery, WebhookRepository } from '../../store/webhook-repository.port';
import { streamText } from '../log/notification';
import { endWebhookAttemptSpan, startWebhookAttemptSpan } from '../../observability/tracing/spans';
import { traceParentOf } from '../../observability/tracing/tracing';
import { parseSettings } from '../log/notification-settings';
import { NotifiedProjections } from '../log/notified-projections.port';
import { WebhookSecrets } from './webhook-secrets';
import { WebhookSender } from './webhook-sender';
import { WebhookSigner } from './webhook-signer';
import { AppMetrics, NO_METRICS, secondsSince } from '../../observability/metrics/app-metrics';

export interface WebhookDispatcherOptions {
  backoffMs: number[];
  timeoutMs: number;
  pollMs: number;
  concurrency: number;
  /** How often the repair sweep looks for keys whose deliveries wait with no head (default 10 s). */
  repairMs?: number;
}

/** The tenant's webhook quotas (src/quotas). */
export interface TenantWebhookQuota {
  /** The cap on attempts in flight (across instances with Redis): a release, or null when at the cap. */
  acquireWebhookSlot(tenantId: string): Promise<(() => void) | null>;
  /** Deliveries one endpoint may have waiting (0: no limit); past it, a failing endpoint is suspended. */
  pendingDeliveries(tenantId: string): Promise<number>;
}
const NO_TENANT_WEBHOOK_QUOTA: TenantWebhookQuota = { acquireWebhookSlot: async () => () => undefined, pendingDeliveries: async () => 0 };

const ENQUEUE_BATCH = 500;
const deliveryId = (d: WebhookDelivery) => `${d.tenantId}\u0000${d.projectionId}\u0000${d.sequence}`;
const projectionKey = (tenantId: string, projectionId: string) => `${tenantId}\u0000${projectionId}`;
const TARGET_CACHE_MS = 1_000;
const DEFAULT_REPAIR_MS = 10_000;
/** Keys repaired per sweep at most (a sweep that finds this many runs again at the next one). */
const REPAIR_BATCH = 100;

/**
 * Turns a projection's notifications into durable deliveries (a cursor in the store, so a
 * restart resumes), then sends them: at least once, in sequence order per state key (a key's
 * next delivery waits until the one before is delivered or dead-lettered), retried on the
 * backoff schedule, dead-lettered after the last step. Several instances share the work: an
 * attempt is claimed in the store first.
 *
 * Tenants take turns: each tick offers the free attempt slots in equal shares to the tenants with
 * due deliveries, starting after the tenant served last. Another tenant's next delivery waits for
 * the next free slot, never for one tenant's backlog of thousands (slots held by a receiver that
 * hangs are for a per-tenant cap on attempts in flight). Notifications become deliveries one batch
 * per projection per tick, for the same reason, and only for projections that were notified (the
 * poll looks at every backlog, for wake-ups lost elsewhere): no scan of every tenant per append.
 */
export class WebhookDispatcher implements NotifiedProjections {
  private readonly logger = new Logger('WebhookDispatcher');
  private timer?: NodeJS.Timeout;
  private repairTimer?: NodeJS.Timeout;
  private repairing?: Promise<number>;
  private readonly inFlight = new Set<string>();
  private readonly targets = new LruMap<
    string,
    { value: { url: string; secrets: string[] } | null; until: number; secretsGeneration: number }
  >(1_000);
  /** Projections with a webhook notified since their last enqueue (or with more left to enqueue). */
  private readonly backlog = new Map<string, { tenantId: string; projectionId: string }>();
  /** Projections at their pendingDeliveries limit with a receiver that is not failing: enqueued again when one of their deliveries ends. */
  private readonly atLimit = new Set<string>();
  /** Set by the poll: the next tick also asks the store for every projection with a backlog. */
  private scanBacklog = true;
  /** The tenant served last: the next tick's turn starts after it. */
  private lastTenant = '';
  private readonly ticks = new SerialRunner(
    () => this.tick(),
    (e) => this.logger.warn(`webhook tick failed: ${e instanceof Error ? e.message : e}`),
  );

  constructor(
    private readonly deliveries: WebhookRepository,
    private readonly notifications: NotificationRepository,
    private readonly projections: ProjectionCatalogRepository,
    private readonly secrets: WebhookSecrets,
    private readonly sender: WebhookSender,
    private readonly options: WebhookDispatcherOptions,
    private readonly tenantQuota: TenantWebhookQuota = NO_TENANT_WEBHOOK_QUOTA,
    private readonly metrics: AppMetrics = NO_METRICS,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.scanBacklog = true;
      this.wake();
    }, this.options.pollMs);
    this.timer.unref();
    this.repairTimer = setInterval(() => void this.repairHeads(), this.options.repairMs ?? DEFAULT_REPAIR_MS);
    this.repairTimer.unref();
    this.wake();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.repairTimer) clearInterval(this.repairTimer);
    await this.repairing;
    await this.ticks.stop();
  }

  /**
   * The repair sweep (every instance, every `repairMs`): a key whose oldest waiting delivery has no
   * head would never be attempted. The head rule (sql-webhook-repository.ts, "Heads") keeps this
   * from happening; should anything break it still, the key gets its head here, with a warning
   * and eventstore_webhook_heads_repaired_total. Two instances sweeping at once repair a key once
   * (each repair is checked again under the key's lock). Returns how many keys were repaired.
   */
  repairHeads(): Promise<number> {
    this.repairing ??= this.repairOnce().finally(() => (this.repairing = undefined));
    return this.repairing;
  }

  private async repairOnce(): Promise<number> {
    let repaired = 0;
    try {
      for (const k of await this.deliveries.headlessKeys(REPAIR_BATCH)) {
        if (!(await this.deliveries.repairHead(k))) continue;
        repaired++;
        this.metrics.webhookHeadRepaired();
        this.logger.warn(
          `webhook deliveries of key ${JSON.stringify(k.stateKey.slice(0, 200))} (projection ${k.projectionId}, tenant ${k.tenantId}) waited with no head: ` +
            `sequence ${k.sequence} made the head`,
        );
      }
    } catch (e) {
      this.logger.warn(`webhook head repair failed: ${e instanceof Error ? e.message : e}`);
    }
    if (repaired > 0) this.wake();
    return repaired;
  }

  /**
   * A projection logged notifications: work only if it has a webhook (known from the cached
   * target, so a projection without one costs a read a second, not a tick per change).
   */
  notified(tenantId: string, projectionId: string): void {
    const work = () => {
      this.backlog.set(projectionKey(tenantId, projectionId), { tenantId, projectionId });
      this.wake();
    };
    void this.target(tenantId, projectionId)
      .then((t) => t && work())
      .catch(work);
  }

  /** New notifications, a finished attempt or the timer: look for work now. */
  wake(): void {
    this.ticks.wake();
  }

  private async tick(): Promise<void> {
    const now = Date.now();
    await this.enqueueBacklogs(now);
    const room = this.options.concurrency - this.inFlight.size;
    if (room <= 0) return;
    const due = (await this.dueInTurns(now, room)).filter((d) => !this.inFlight.has(deliveryId(d)));
    // A tenant at its webhooksInFlight quota has its deliveries left pending for a later pass (woken when one finishes).
    const slots = await Promise.all(due.map((d) => this.tenantQuota.acquireWebhookSlot(d.tenantId)));
    // Claimed together (on SQLite one group commit for all of them). The claim pushes the next try past this
    // attempt's deadline, so no one else sends it meanwhile.
    const claimed = await Promise.all(
      due.map((d, i) => (slots[i] ? this.deliveries.claim(d, now + this.options.timeoutMs + 5_000) : false)),
    );
    due.forEach((d, i) => {
      const release = slots[i];
      if (!release) return;
      if (!claimed[i]) return release();
      const id = deliveryId(d);
      this.inFlight.add(id);
      void this.attempt({ ...d, attempts: d.attempts + 1 })
        .catch((e) => this.logger.warn(`delivery ${d.projectionId}#${d.sequence} failed: ${e instanceof Error ? e.message : e}`))
        .finally(() => {
          release();
          this.inFlight.delete(id);
          const key = projectionKey(d.tenantId, d.projectionId);
          if (this.atLimit.delete(key)) this.backlog.set(key, { tenantId: d.tenantId, projectionId: d.projectionId });
          this.wake();
        });
    });
  }

  /**
   * Notifications become deliveries: one batch per projection per tick (a projection with more
   * stays in the backlog and the tick runs again), so a projection that logged 100,000 changes
   * does not keep the others' deliveries waiting until all of its are enqueued.
   */
  private async enqueueBacklogs(now: number): Promise<void> {
    if (this.scanBacklog) {
      this.scanBacklog = false;
      for (const p of await this.deliveries.backlogged(100)) this.backlog.set(projectionKey(p.tenantId, p.projectionId), p);
    }
    const projections = [...this.backlog];
    this.backlog.clear();
    let more = false;
    for (const [i, [key, p]] of projections.entries()) {
      try {
        const room = await this.room(key, p.tenantId, p.projectionId, now);
        if (room > 0 && (await this.deliveries.enqueue(p.tenantId, p.projectionId, room, now)) === room) {
          this.backlog.set(key, p);
          more = true;
        }
      } catch (e) {
        for (const [k, q] of projections.slice(i)) this.backlog.set(k, q); // kept for the next tick
        throw e;
      }
    }
    if (more) this.wake();
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
    if (await this.deliveries.suspension(tenantId, projectionId)) return 0;
    const pending = await this.deliveries.pendingCount(tenantId, projectionId, limit);
    if (pending < limit) return Math.min(ENQUEUE_BATCH, limit - pending);
    const head = await this.notifications.head(tenantId, projectionId);
    if (!head || head.lastSequence <= head.webhookSequence) return 0;
    if (await this.deliveries.pendingFailing(tenantId, projectionId)) {
      const s = await this.deliveries.suspend(
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
   * tenant by tenant. Room a tenant did not need is offered again by the next tick, at once.
   */
  private async dueInTurns(now: number, room: number): Promise<WebhookDelivery[]> {
    const tenants = await this.deliveries.tenantsWithDue(now, this.lastTenant, room);
    if (tenants.length === 0) return [];
    const share = Math.ceil(room / tenants.length);
    const byTenant = new Map<string, WebhookDelivery[]>(tenants.map((t) => [t, []]));
    for (const d of await this.deliveries.dueOfTenants(tenants, now, share)) byTenant.get(d.tenantId)?.push(d);
    const lists = [...byTenant.values()];
    const due = takeTurns(lists, room);
    if (due.length > 0) this.lastTenant = due[due.length - 1].tenantId;
    if (due.length < room && lists.some((l) => l.length >= share)) this.wake();
    return due;
  }

  /**
   * Where a projection's deliveries go and what signs them, cached for a second: a redeploy shows
   * within that. A rotation or a new isolated secret (on this instance) shows at once: an entry
   * read before the secrets' generation moved is not used (the previous secret keeps signing for
   * the overlap anyway).
   */
  private async target(tenantId: string, projectionId: string): Promise<{ url: string; secrets: string[] } | null> {
    const id = `${tenantId}\u0000${projectionId}`;
    const secretsGeneration = this.secrets.generation;
    const hit = this.targets.get(id);
    if (hit && hit.until > Date.now() && hit.secretsGeneration === secretsGeneration) return hit.value;
    const p = await this.projections.get(tenantId, projectionId);
    const settings = parseSettings(p?.notifyConfig ?? null);
    const value =
      p && settings.webhookUrl
        ? { url: settings.webhookUrl, secrets: await this.secrets.signing(tenantId, projectionId, settings.isolated) }
        : null;
    this.targets.set(id, { value, until: Date.now() + TARGET_CACHE_MS, secretsGeneration });
    return value;
  }

  private async attempt(d: WebhookDelivery): Promise<void> {
    const [[n], target] = await Promise.all([
      this.notifications.read(d.tenantId, d.projectionId, d.sequence - 1, 1),
      this.target(d.tenantId, d.projectionId),
    ]);
    if (!n || n.sequence !== d.sequence || !target) {
      this.metrics.webhookDeadLettered();
      await this.deliveries.attemptFailed(
        d,
        !target ? 'webhook no longer configured' : 'NOTIFICATION_EXPIRED: removed by retention',
        null,
        Date.now(),
      );
      return;
    }
    const { url, secrets } = target;
    const body = streamText(n);
    const headers: Record<string, string> = {
      ...WebhookSigner.headers(secrets, `msg_${d.projectionId}_${d.sequence}`, Math.floor(Date.now() / 1000), body),
      // Lets a receiver see a gap and backfill from GET /projections/{id}/notifications.
      'webhook-sequence': String(d.sequence),
      'webhook-projection-id': d.projectionId,
    };
    // The notification's trace goes on to the receiver: through the attempt's span when tracing is
    // on, else as stored (the caller's own traceparent: the service adds no span of its own).
    const span = startWebhookAttemptSpan(n.traceParent, url, d);
    if (span) headers.traceparent = traceParentOf(span)!;
    else if (n.traceParent) headers.traceparent = n.traceParent;
    if (headers.traceparent && n.traceState) headers.tracestate = n.traceState;
    const sent = performance.now();
    const r = await this.sender.send(url, headers, body);
    endWebhookAttemptSpan(span, r);
    const now = Date.now();
    const delay = this.options.backoffMs[d.attempts - 1];
    this.metrics.webhookAttempted(r.ok ? 'delivered' : delay === undefined ? 'dead' : 'failed', secondsSince(sent));
    if (r.ok) return this.deliveries.delivered(d, now);
    await this.deliveries.attemptFailed(d, r.error, delay === undefined ? null : now + delay, now);
  }
}
