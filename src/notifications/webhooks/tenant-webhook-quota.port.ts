/**
 * The tenant's webhook quotas, as the webhook deliveries ask them. Called by WebhookDeliveryRound
 * (and WebhookEndpoints for the limit); bound to TenantQuotas (src/quotas) in NotificationsModule.
 */
export abstract class TenantWebhookQuota {
  /** The cap on attempts in flight (across instances with Redis): a release, or null when at the cap. */
  abstract acquireWebhookSlot(tenantId: string): Promise<(() => void) | null>;
  /** Deliveries one endpoint may have waiting (0: no limit); past it, a failing endpoint is suspended. */
  abstract pendingDeliveries(tenantId: string): Promise<number>;
}

/** No quota at all (tests, and a tenant without limits). */
export const NO_TENANT_WEBHOOK_QUOTA: TenantWebhookQuota = {
  acquireWebhookSlot: async () => () => undefined,
  pendingDeliveries: async () => 0,
};
