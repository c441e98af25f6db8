import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { openStore } from './store.factory';
import { EventWebhookClaims } from './event-webhook-claims.port';
import { EventWebhookSubscriptions } from './event-webhook-subscriptions.port';
import { NotificationRepository } from './notification-repository.port';
import { ProjectionCatalogRepository } from './projection-catalog.port';
import { STORE, Store } from './store.port';
import { WebhookDeliveryLog } from './webhook-delivery-log.port';
import { WebhookDeliveryQueue } from './webhook-delivery-queue.port';
import { WebhookDeliveryRetention } from './webhook-delivery-retention.port';
import { WebhookEndpointState } from './webhook-endpoint-state.port';
import { WebhookHeadRepair } from './webhook-head-repair.port';
import { WebhookSecretStore } from './webhook-secret-store.port';

@Global()
@Module({
  providers: [
    { provide: STORE, inject: [APP_CONFIG], useFactory: (config: AppConfig) => openStore(config) },
    // TODO(merge): the events slice's per-repository tokens; keep one line each.
    { provide: NotificationRepository, inject: [STORE], useFactory: (s: Store) => s.notifications },
    { provide: ProjectionCatalogRepository, inject: [STORE], useFactory: (s: Store) => s.projections },
    // webhooks
    { provide: WebhookSecretStore, inject: [STORE], useFactory: (s: Store) => s.webhooks },
    { provide: WebhookDeliveryQueue, inject: [STORE], useFactory: (s: Store) => s.webhooks },
    { provide: WebhookHeadRepair, inject: [STORE], useFactory: (s: Store) => s.webhooks },
    { provide: WebhookEndpointState, inject: [STORE], useFactory: (s: Store) => s.webhooks },
    { provide: WebhookDeliveryLog, inject: [STORE], useFactory: (s: Store) => s.webhooks },
    { provide: WebhookDeliveryRetention, inject: [STORE], useFactory: (s: Store) => s.webhooks },
    // event webhooks
    { provide: EventWebhookSubscriptions, inject: [STORE], useFactory: (s: Store) => s.eventWebhooks },
    { provide: EventWebhookClaims, inject: [STORE], useFactory: (s: Store) => s.eventWebhooks },
  ],
  exports: [
    STORE,
    NotificationRepository,
    ProjectionCatalogRepository,
    WebhookSecretStore,
    WebhookDeliveryQueue,
    WebhookHeadRepair,
    WebhookEndpointState,
    WebhookDeliveryLog,
    WebhookDeliveryRetention,
    EventWebhookSubscriptions,
    EventWebhookClaims,
  ],
})
export class StoreModule implements OnApplicationShutdown {
  constructor(@Inject(STORE) private readonly store: Store) {}

  // After the HTTP server has closed (Nest runs shutdown hooks after dispose), so in-flight
  // appends have finished; close() still waits for any write in progress.
  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
