import { Injectable, Logger } from '@nestjs/common';
import { AppMetrics } from '../../observability/metrics/app-metrics';
import { WebhookHeadRepair } from '../../store/webhook-head-repair.port';
import { NotifiedProjections } from '../log/notified-projections.port';
import { DeliveryTick } from './delivery-tick';
import { WebhookDeliveryRound } from './webhook-delivery-round';
import { WebhookDispatcherOptions } from './webhook-dispatcher-options';
import { WebhookTargets } from './webhook-targets';

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
 * The feed's NotifiedProjections (NotificationsModule binds it here): `notified` wakes the
 * DeliveryTick, which runs WebhookDeliveryRound (enqueue, tenants in turn, claim) and each claimed
 * delivery's WebhookDeliveryAttempt (sign, POST). Also the repair sweep of headless keys.
 */
@Injectable()
export class WebhookDispatcher implements NotifiedProjections {
  private readonly logger = new Logger('WebhookDispatcher');
  private repairTimer?: NodeJS.Timeout;
  private repairing?: Promise<number>;

  constructor(
    private readonly tick: DeliveryTick,
    private readonly round: WebhookDeliveryRound,
    private readonly targets: WebhookTargets,
    private readonly heads: WebhookHeadRepair,
    private readonly options: WebhookDispatcherOptions,
    private readonly metrics: AppMetrics,
  ) {}

  start(): void {
    this.tick.start();
    this.repairTimer = setInterval(() => void this.repairHeads(), this.options.repairMs ?? DEFAULT_REPAIR_MS);
    this.repairTimer.unref();
  }

  async close(): Promise<void> {
    if (this.repairTimer) clearInterval(this.repairTimer);
    await this.repairing;
    await this.tick.close();
  }

  /**
   * The repair sweep (every instance, every `repairMs`): a key whose oldest waiting delivery has no
   * head would never be attempted. The head rule (sql-webhook-heads.ts, "Heads") keeps this
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
      for (const k of await this.heads.headlessKeys(REPAIR_BATCH)) {
        if (!(await this.heads.repairHead(k))) continue;
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
    void this.wakeIfWebhook(tenantId, projectionId);
  }

  private async wakeIfWebhook(tenantId: string, projectionId: string): Promise<void> {
    try {
      if (!(await this.targets.of(tenantId, projectionId))) return;
    } catch {
      // The target could not be read: look for work anyway (the round finds none without a webhook).
    }
    this.round.notified(tenantId, projectionId);
    this.tick.wake();
  }

  /** New notifications, a finished attempt or the timer: look for work now. */
  wake(): void {
    this.tick.wake();
  }
}
