import { Logger } from '@nestjs/common';
import { LruMap } from '../common/lru-map';
import { SerialRunner } from '../common/serial-runner';
import { NotificationRepository } from '../store/notification-repository.port';
import { ProjectionRepository } from '../store/projection-repository.port';
import { WebhookDelivery, WebhookRepository } from '../store/webhook-repository.port';
import { streamText } from './notification';
import { parseSettings } from './notification-settings';
import { WebhookSecrets } from './webhook-secrets';
import { WebhookSender } from './webhook-sender';
import { WebhookSigner } from './webhook-signer';

export interface WebhookDispatcherOptions {
  backoffMs: number[];
  timeoutMs: number;
  pollMs: number;
  concurrency: number;
}

/** The tenant-wide cap on webhook attempts in flight (src/quotas; across instances with Redis): a release, or null when at the cap. */
export interface TenantWebhookQuota {
  acquireWebhookSlot(tenantId: string): Promise<(() => void) | null>;
}
const NO_TENANT_WEBHOOK_QUOTA: TenantWebhookQuota = { acquireWebhookSlot: async () => () => undefined };

const ENQUEUE_BATCH = 500;
const deliveryId = (d: WebhookDelivery) => `${d.tenantId}\u0000${d.projectionId}\u0000${d.sequence}`;
const TARGET_CACHE_MS = 1_000;

/**
 * Turns a projection's notifications into durable deliveries (a cursor in the store, so a
 * restart resumes), then sends them: at least once, in sequence order per state key (a key's
 * next delivery waits until the one before is delivered or dead-lettered), retried on the
 * backoff schedule, dead-lettered after the last step. Several instances share the work: an
 * attempt is claimed in the store first.
 */
export class WebhookDispatcher {
  private readonly logger = new Logger('WebhookDispatcher');
  private timer?: NodeJS.Timeout;
  private readonly inFlight = new Set<string>();
  private readonly targets = new LruMap<string, { value: { url: string; secrets: string[] } | null; until: number }>(1_000);
  private readonly ticks = new SerialRunner(
    () => this.tick(),
    (e) => this.logger.warn(`webhook tick failed: ${e instanceof Error ? e.message : e}`),
  );

  constructor(
    private readonly deliveries: WebhookRepository,
    private readonly notifications: NotificationRepository,
    private readonly projections: ProjectionRepository,
    private readonly secrets: WebhookSecrets,
    private readonly sender: WebhookSender,
    private readonly options: WebhookDispatcherOptions,
    private readonly tenantQuota: TenantWebhookQuota = NO_TENANT_WEBHOOK_QUOTA,
  ) {
    secrets.onChange(() => this.targets.clear());
  }

  start(): void {
    this.timer = setInterval(() => this.wake(), this.options.pollMs);
    this.timer.unref();
    this.wake();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.ticks.stop();
  }

  /**
   * A projection logged notifications: work only if it has a webhook (known from the cached
   * target, so a projection without one costs a read a second, not a tick per change).
   */
  notified(tenantId: string, projectionId: string): void {
    void this.target(tenantId, projectionId)
      .then((t) => t && this.wake())
      .catch(() => this.wake());
  }

  /** New notifications, a finished attempt or the timer: look for work now. */
  wake(): void {
    this.ticks.wake();
  }

  private async tick(): Promise<void> {
    const now = Date.now();
    for (const p of await this.deliveries.backlogged(100)) {
      while ((await this.deliveries.enqueue(p.tenantId, p.projectionId, ENQUEUE_BATCH, now)) === ENQUEUE_BATCH);
    }
    const room = this.options.concurrency - this.inFlight.size;
    if (room <= 0) return;
    const due = (await this.deliveries.due(now, room)).filter((d) => !this.inFlight.has(deliveryId(d)));
    // A tenant at its webhooksInFlight quota has its deliveries left pending for a later pass (woken when one finishes).
    const slots = await Promise.all(due.map((d) => this.tenantQuota.acquireWebhookSlot(d.tenantId)));
    // Claimed together (on SQLite one group commit for all of them). The claim pushes the next try past this
    // attempt's deadline, so no one else sends it meanwhile.
    const claimed = await Promise.all(due.map((d, i) => (slots[i] ? this.deliveries.claim(d, now + this.options.timeoutMs + 5_000) : false)));
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
          this.wake();
        });
    });
  }

  /**
   * Where a projection's deliveries go and what signs them, cached for a second: a rotation or
   * redeploy shows within that (the previous secret keeps signing for the overlap anyway).
   */
  private async target(tenantId: string, projectionId: string): Promise<{ url: string; secrets: string[] } | null> {
    const id = `${tenantId}\u0000${projectionId}`;
    const hit = this.targets.get(id);
    if (hit && hit.until > Date.now()) return hit.value;
    const p = await this.projections.get(tenantId, projectionId);
    const settings = parseSettings(p?.notifyConfig ?? null);
    const value = p && settings.webhookUrl ? { url: settings.webhookUrl, secrets: await this.secrets.signing(tenantId, projectionId, settings.isolated) } : null;
    this.targets.set(id, { value, until: Date.now() + TARGET_CACHE_MS });
    return value;
  }

  private async attempt(d: WebhookDelivery): Promise<void> {
    const [[n], target] = await Promise.all([this.notifications.read(d.tenantId, d.projectionId, d.sequence - 1, 1), this.target(d.tenantId, d.projectionId)]);
    if (!n || n.sequence !== d.sequence || !target) {
      await this.deliveries.attemptFailed(d, !target ? 'webhook no longer configured' : 'notification no longer kept', null, Date.now());
      return;
    }
    const { url, secrets } = target;
    const body = streamText(n);
    const headers = {
      ...WebhookSigner.headers(secrets, `msg_${d.projectionId}_${d.sequence}`, Math.floor(Date.now() / 1000), body),
      // Lets a receiver see a gap and backfill from GET /projections/{id}/notifications.
      'webhook-sequence': String(d.sequence),
      'webhook-projection-id': d.projectionId,
    };
    const r = await this.sender.send(url, headers, body);
    const now = Date.now();
    if (r.ok) return this.deliveries.delivered(d, now);
    const delay = this.options.backoffMs[d.attempts - 1];
    await this.deliveries.attemptFailed(d, r.error, delay === undefined ? null : now + delay, now);
  }
}
