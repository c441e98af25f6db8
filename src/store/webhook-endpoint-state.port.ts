import { WebhookSuspension } from './webhook-records';

/**
 * One projection webhook endpoint's state in the store: where its deliveries start, how many wait
 * (its tenant's pendingDeliveries limit) and whether its receiver is failing, its suspension and
 * the resume. Called by WebhookDispatcher (back-pressure, suspend), WebhookEndpoints (status,
 * resume) and NotificationSetup (a webhook newly configured); adapters SqlWebhookRepository
 * (store.webhooks) and InMemoryWebhookRepository.
 */
export abstract class WebhookEndpointState {
  /** Deliveries start from the projection's current notifications (a newly configured webhook does not replay the past). */
  abstract startDeliveriesNow(tenantId: string, projectionId: string): Promise<void>;
  /** The projection's pending deliveries, counted up to `cap` (the limit: no need to count past it). */
  abstract pendingCount(tenantId: string, projectionId: string, cap: number): Promise<number>;
  /** Whether an attempt of one of the projection's pending deliveries has failed (the receiver is failing, not just busy). */
  abstract pendingFailing(tenantId: string, projectionId: string): Promise<boolean>;
  abstract suspension(tenantId: string, projectionId: string): Promise<WebhookSuspension | null>;
  /**
   * Suspends the endpoint, atomically: remembers the oldest undelivered sequence, drops its pending
   * deliveries (the log still has them; a resume makes them again). A suspended one stays as it is.
   */
  abstract suspend(tenantId: string, projectionId: string, reason: string, now: number): Promise<WebhookSuspension>;
  /**
   * Lifts the suspension and moves the webhook cursor to `afterSequence`: deliveries are made again
   * from the next. False if not suspended.
   */
  abstract resume(tenantId: string, projectionId: string, afterSequence: number): Promise<boolean>;
}
