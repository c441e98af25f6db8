import { WebhookDelivery } from './webhook-records';

/**
 * The durable delivery queue of projection webhooks: notifications after the webhook cursor made
 * deliveries, one head per state key (sql-webhook-heads.ts, "Heads"), the due ones taken in tenant
 * turns, claimed, completed, retried or dead-lettered. Called by WebhookDispatcher's tick;
 * adapters SqlWebhookRepository (store.webhooks) and InMemoryWebhookRepository.
 */
export abstract class WebhookDeliveryQueue {
  /** Projections with a webhook and notifications not yet turned into deliveries. */
  abstract backlogged(limit: number): Promise<{ tenantId: string; projectionId: string }[]>;
  /** Turns up to `limit` notifications after the projection's webhook cursor into pending deliveries. */
  abstract enqueue(tenantId: string, projectionId: string, limit: number, now: number): Promise<number>;
  /**
   * Tenants with a pending delivery due now, in tenant id order starting after `after` and
   * wrapping round to the start (the dispatcher's turn order). Found by an index walk over tenants
   * with pending deliveries: tenants without any cost nothing.
   */
  abstract tenantsWithDue(now: number, after: string, limit: number): Promise<string[]>;
  /**
   * For each tenant, up to `perTenant` pending deliveries due now whose key has no earlier pending
   * delivery (order per key), earliest due first; one statement for all of them.
   */
  abstract dueOfTenants(tenantIds: string[], now: number, perTenant: number): Promise<WebhookDelivery[]>;
  /** Takes a due delivery for one attempt (counts it; next try not before `until`); false if another took it. */
  abstract claim(d: WebhookDelivery, until: number): Promise<boolean>;
  abstract delivered(d: WebhookDelivery, now: number): Promise<void>;
  /** After a failed attempt: retry at `retryAt`, or dead-letter when it is null. */
  abstract attemptFailed(d: WebhookDelivery, error: string, retryAt: number | null, now: number): Promise<void>;
}
