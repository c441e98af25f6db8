import { DeliveryStatus, WebhookDelivery } from './webhook-records';

/**
 * The deliveries as the API shows them: listing, replay of dead letters, and what retention
 * took. Called by WebhookDeliveries and WebhookEndpoints; adapters SqlWebhookRepository
 * (store.webhooks) and InMemoryWebhookRepository.
 */
export abstract class WebhookDeliveryLog {
  abstract list(
    tenantId: string,
    projectionId: string,
    opts: { status?: DeliveryStatus; afterSequence: number; limit: number },
  ): Promise<WebhookDelivery[]>;
  /**
   * Dead deliveries (one, or all of the projection's) go back to pending, due now; only those after
   * `afterSequence` (the ones whose notification retention still keeps). Returns how many.
   */
  abstract replay(tenantId: string, projectionId: string, sequence: number | null, now: number, afterSequence?: number): Promise<number>;
  /** Dead deliveries of the projection at or below `sequence` (their notifications are gone). */
  abstract countDead(tenantId: string, projectionId: string, atOrBelow: number): Promise<number>;
}
