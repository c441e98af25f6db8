/**
 * Finished deliveries forgotten after their keep time. Called by NotificationRetention; adapters
 * SqlWebhookRepository (store.webhooks) and InMemoryWebhookRepository.
 */
export abstract class WebhookDeliveryRetention {
  /** Removes delivered rows older than `before`. */
  abstract forgetDelivered(before: number): Promise<number>;
  /** Removes dead rows that died before `before` (WEBHOOK_DEAD_KEEP_MS). */
  abstract forgetDead(before: number): Promise<number>;
}
