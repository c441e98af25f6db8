import { EventWebhookDeadLetter, EventWebhookRecord, NewEventWebhook } from './event-webhook-records';

/**
 * Event webhook subscriptions as the API manages them (create within the limit, status, delete,
 * dead letters, replay, resume); every statement per tenant. Called by EventWebhooks; adapters
 * SqlEventWebhookRepository (store.eventWebhooks).
 */
export abstract class EventWebhookSubscriptions {
  /** Inserts unless the tenant already has `limit` subscriptions (0: no limit): false then. */
  abstract create(w: NewEventWebhook, limit: number): Promise<boolean>;
  abstract count(tenantId: string): Promise<number>;
  abstract get(tenantId: string, webhookId: string): Promise<EventWebhookRecord | null>;
  abstract list(tenantId: string): Promise<EventWebhookRecord[]>;
  /** The subscription and its dead letters; false when there was none. */
  abstract delete(tenantId: string, webhookId: string): Promise<boolean>;
  /** The tenant's last position (0 before its first event). */
  abstract headPosition(tenantId: string): Promise<number>;
  abstract deadCount(tenantId: string, webhookId: string): Promise<number>;
  abstract deadLetters(tenantId: string, webhookId: string, afterPosition: number, limit: number): Promise<EventWebhookDeadLetter[]>;
  /** Matching events after the cursor among the next `window` positions, counted up to `cap`. */
  abstract pendingCount(w: EventWebhookRecord, cap: number, window: number): Promise<number>;
  /**
   * Cursor back to `fromPosition - 1`, due now, its dead letters from `fromPosition` on removed
   * (they are delivered again); only while active. False when none or suspended.
   */
  abstract replay(tenantId: string, webhookId: string, fromPosition: number, now: number): Promise<boolean>;
  /** Suspended → active, due now, from its cursor. False when none or not suspended. */
  abstract resume(tenantId: string, webhookId: string, now: number): Promise<boolean>;
}
