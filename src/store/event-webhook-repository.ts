import { EventWebhookClaims } from './event-webhook-claims.port';
import { EventWebhookSubscriptions } from './event-webhook-subscriptions.port';

/**
 * Everything of event webhooks in the store, as one adapter (store.eventWebhooks) implements it;
 * callers depend on their role's port (StoreModule, "event webhooks").
 */
export type EventWebhookRepository = EventWebhookSubscriptions & EventWebhookClaims;
