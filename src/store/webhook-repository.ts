import { WebhookDeliveryLog } from './webhook-delivery-log.port';
import { WebhookDeliveryQueue } from './webhook-delivery-queue.port';
import { WebhookDeliveryRetention } from './webhook-delivery-retention.port';
import { WebhookEndpointState } from './webhook-endpoint-state.port';
import { WebhookHeadRepair } from './webhook-head-repair.port';
import { WebhookSecretStore } from './webhook-secret-store.port';

/**
 * Everything of projection webhooks in the store, as one adapter (store.webhooks) implements it;
 * callers depend on the role they use, each its own port and token (StoreModule, "webhooks"):
 * WebhookSecretStore, WebhookDeliveryQueue, WebhookHeadRepair, WebhookEndpointState,
 * WebhookDeliveryLog, WebhookDeliveryRetention.
 */
export type WebhookRepository = WebhookSecretStore &
  WebhookDeliveryQueue &
  WebhookHeadRepair &
  WebhookEndpointState &
  WebhookDeliveryLog &
  WebhookDeliveryRetention;
