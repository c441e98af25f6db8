import { Logger } from '@nestjs/common';
import { NotificationRepository } from '../../store/notification-repository.port';
import { WebhookDeliveryRetention } from '../../store/webhook-delivery-retention.port';

/** Delivered webhook rows are kept this long for the deliveries listing. */
const DELIVERED_KEEP_MS = 86_400_000;

/**
 * Bounds the notification log: the newest `keepCount` per projection stay, older ones go after
 * `keepMs`; delivered webhook rows go after a day, dead ones after `deadKeepMs`.
 */
export class NotificationRetention {
  private readonly logger = new Logger('NotificationRetention');
  private timer?: NodeJS.Timeout;
  private running = false;

  constructor(
    private readonly repo: NotificationRepository,
    private readonly webhooks: WebhookDeliveryRetention,
    private readonly policy: { keepCount: number; keepMs: number; sweepMs: number; deadKeepMs: number },
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.sweep(), this.policy.sweepMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async sweep(now = Date.now()): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const policy = { keepCount: this.policy.keepCount, removeBefore: now - this.policy.keepMs };
      // Only projections with something to remove: an idle one costs no statement of its own.
      for (const h of await this.repo.headsToPrune(policy)) await this.repo.prune(h.tenantId, h.projectionId, policy);
      await this.webhooks.forgetDelivered(now - DELIVERED_KEEP_MS);
      // Dead letters are for an operator to look at and replay, not for ever (WEBHOOK_DEAD_KEEP_MS).
      await this.webhooks.forgetDead(now - this.policy.deadKeepMs);
    } catch (e) {
      this.logger.warn(`retention sweep failed: ${e instanceof Error ? e.message : e}`);
    } finally {
      this.running = false;
    }
  }
}
