import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { AggregateErasure } from './erasure.port';
import { EventLog } from './event-log.port';
import { IdempotencyKeyRepository } from './idempotency-key.port';
import { NotificationRepository } from './notification-repository.port';
import { ProjectionCatalogRepository } from './projection-catalog.port';
import { BindingRepository, SnapshotRepository } from './reducer-state.port';
import { LaneGauges } from './lanes/lane-gauges.port';
import { LaneHolds } from './lanes/lane-holds.port';
import { LaneInbox } from './lanes/lane-inbox.port';
import { LaneReads } from './lanes/lane-reads.port';
import { LaneRuns } from './lanes/lane-runs.port';
import { LaneSweep } from './lanes/lane-sweep.port';
import { openStore } from './store.factory';
import { EventWebhookClaims } from './event-webhook-claims.port';
import { EventWebhookSubscriptions } from './event-webhook-subscriptions.port';
import { STORE, Store } from './store.port';
import { TenantRepository } from './tenant-repository.port';
import { TenantTransferStore } from './tenant-transfer.port';
import { UploadRepository } from './upload-repository.port';
import { WebhookDeliveryLog } from './webhook-delivery-log.port';
import { WebhookDeliveryQueue } from './webhook-delivery-queue.port';
import { WebhookDeliveryRetention } from './webhook-delivery-retention.port';
import { WebhookEndpointState } from './webhook-endpoint-state.port';
import { WebhookHeadRepair } from './webhook-head-repair.port';
import { WebhookSecretStore } from './webhook-secret-store.port';

/**
 * The store, global: STORE (the adapter SQLite or PostgreSQL, chosen by DATABASE_URL) and each of
 * its repositories under its own port class, so that a consumer injects the role it uses.
 */
@Global()
@Module({
  providers: [
    { provide: STORE, inject: [APP_CONFIG], useFactory: (config: AppConfig) => openStore(config) },
    // Each role derived from the one real choice made for STORE.
    // events, tenancy, reducers, projections, notifications, tenant transfer
    { provide: EventLog, inject: [STORE], useFactory: (s: Store) => s.events },
    { provide: TenantRepository, inject: [STORE], useFactory: (s: Store) => s.tenants },
    { provide: UploadRepository, inject: [STORE], useFactory: (s: Store) => s.uploads },
    { provide: BindingRepository, inject: [STORE], useFactory: (s: Store) => s.bindings },
    { provide: SnapshotRepository, inject: [STORE], useFactory: (s: Store) => s.snapshots },
    { provide: ProjectionCatalogRepository, inject: [STORE], useFactory: (s: Store) => s.projections },
    { provide: NotificationRepository, inject: [STORE], useFactory: (s: Store) => s.notifications },
    { provide: IdempotencyKeyRepository, inject: [STORE], useFactory: (s: Store) => s.idempotencyKeys },
    { provide: TenantTransferStore, inject: [STORE], useFactory: (s: Store) => s.transfer },
    { provide: AggregateErasure, inject: [STORE], useFactory: (s: Store) => s.erasure },
    // lanes: each role under its port, derived from the one store chosen (SQLite or PostgreSQL)
    { provide: LaneInbox, inject: [STORE], useFactory: (s: Store) => s.lanes.inbox },
    { provide: LaneRuns, inject: [STORE], useFactory: (s: Store) => s.lanes.runs },
    { provide: LaneHolds, inject: [STORE], useFactory: (s: Store) => s.lanes.holds },
    { provide: LaneReads, inject: [STORE], useFactory: (s: Store) => s.lanes.reads },
    { provide: LaneSweep, inject: [STORE], useFactory: (s: Store) => s.lanes.sweep },
    { provide: LaneGauges, inject: [STORE], useFactory: (s: Store) => s.lanes.gauges },
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
    // events, tenancy, reducers, projections, notifications, tenant transfer
    EventLog,
    TenantRepository,
    UploadRepository,
    BindingRepository,
    SnapshotRepository,
    ProjectionCatalogRepository,
    NotificationRepository,
    IdempotencyKeyRepository,
    TenantTransferStore,
    AggregateErasure,
    // lanes
    LaneInbox,
    LaneRuns,
    LaneHolds,
    LaneReads,
    LaneSweep,
    LaneGauges,
    // webhooks, event webhooks
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
