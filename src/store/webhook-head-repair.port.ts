import { HeadlessKey } from './webhook-records';

/**
 * The repair of keys whose deliveries wait with no head (the head rule keeps this from happening;
 * should anything break it, these find and mend it). Called by WebhookDispatcher's repair sweep;
 * adapters SqlWebhookRepository (store.webhooks) and InMemoryWebhookRepository.
 */
export abstract class WebhookHeadRepair {
  /**
   * Keys whose oldest waiting delivery has no pending head, up to `limit`: deliveries that would
   * otherwise never be attempted. The head rule keeps this empty; the repair sweep asks.
   */
  abstract headlessKeys(limit: number): Promise<HeadlessKey[]>;
  /**
   * Makes `k.sequence` its key's head if it still is the key's oldest undelivered delivery and
   * the key still has no head (checked under the key's lock); false if nothing needed doing.
   */
  abstract repairHead(k: HeadlessKey): Promise<boolean>;
}
