import { WebhookSecretRecord } from './webhook-records';

/**
 * Webhook signing secrets as stored (sealed by SecretCipher): the tenant's shared one (scope
 * TENANT_SCOPE) and projections' isolated ones. Called by WebhookSecrets; adapters
 * SqlWebhookRepository (store.webhooks) and InMemoryWebhookRepository.
 */
export abstract class WebhookSecretStore {
  abstract getSecret(tenantId: string, scope: string): Promise<WebhookSecretRecord | null>;
  /** Stores `secret` unless the scope has one already; returns what is stored. */
  abstract ensureSecret(tenantId: string, scope: string, secret: string, now: number): Promise<WebhookSecretRecord>;
  /** Replaces the scope's secret; the replaced one keeps signing until `overlapUntil`. */
  abstract replaceSecret(tenantId: string, scope: string, secret: string, now: number, overlapUntil: number): Promise<WebhookSecretRecord>;
}
