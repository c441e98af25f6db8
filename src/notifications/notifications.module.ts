import { BeforeApplicationShutdown, Global, Module, OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { EventsAppended } from '../events/append-committed.port';
import { EventStreamSse } from '../events/event-stream.port';
import { LaneApplied } from '../lanes/lane-applied.port';
import { ProjectionNotificationSetup } from '../projections/projection-notification-setup.port';
import { QuotasModule } from '../quotas/quotas.module';
import { TenantQuotas } from '../quotas/tenant-quotas';
import { STORE, Store } from '../store/store.port';
import { WebhookSecretStore } from '../store/webhook-secret-store.port';
import { TenancyModule } from '../tenancy/tenancy.module';
import { EventFeed } from './log/event-feed';
import { NotificationFeed } from './log/notification-feed';
import { NotificationLog } from './log/notification-log';
import { NotificationLogController } from './log/notification-log.controller';
import { NotificationReader } from './log/notification-reader';
import { NotifiedProjections } from './log/notified-projections.port';
import { NotificationRetention } from './log/notification-retention';
import { ProjectionLookup, StoredProjectionLookup } from './log/projection-lookup';
import { StreamWakeups } from './log/stream-wakeups.port';
import { ServiceEventStreamSource } from './streams/event-stream-source';
import { EventStreamSource } from './streams/event-stream-source.port';
import { ServiceStreamSource } from './streams/service-stream-source';
import { SseEventStream, SseStream } from './streams/sse-stream';
import { SseStreamController } from './streams/sse-stream.controller';
import { StreamHub } from './streams/stream-hub';
import { StreamLimiter, StreamLimits } from './streams/stream-limiter';
import { StreamOptions } from './streams/stream-options';
import { StreamSource } from './streams/stream-source.port';
import { TenantStreamQuota } from './streams/tenant-stream-quota.port';
import { WebSocketStreamServer } from './streams/websocket-stream';
import { NotificationSetup } from './webhooks/notification-setup';
import { DeliveryTick } from './webhooks/delivery-tick';
import { TenantWebhookQuota } from './webhooks/tenant-webhook-quota.port';
import { WebhookDeliveryAttempt } from './webhooks/webhook-delivery-attempt';
import { WebhookDeliveryRound } from './webhooks/webhook-delivery-round';
import { WebhookDispatcherOptions } from './webhooks/webhook-dispatcher-options';
import { WebhookTargets } from './webhooks/webhook-targets';
import { SecretCipher } from './webhooks/secret-cipher';
import { WebhookDeliveries } from './webhooks/webhook-deliveries';
import { WebhookDispatcher } from './webhooks/webhook-dispatcher';
import { WebhookEndpoints } from './webhooks/webhook-endpoints';
import { WebhookSecretRotation } from './webhooks/webhook-secret-rotation';
import { WebhookSecrets } from './webhooks/webhook-secrets';
import { WebhookSender } from './webhooks/webhook-sender';
import { WebhookUrlGuard } from './webhooks/webhook-url-guard';
import { ProjectionWebhookController, WebhooksController } from './webhooks/webhooks.controller';

/**
 * The notification log (log/) and what pushes it out: the streams (streams/: WebSocket, SSE) and
 * the webhooks (webhooks/). One module, as the three share the feed and the store; the folders
 * depend on log/ and not on each other, so the ports log/ calls (StreamWakeups, NotifiedProjections)
 * are bound here. Global: it binds the ports other features call (LaneApplied, EventsAppended,
 * EventStreamSse, ProjectionNotificationSetup) and exports them; the callers' modules do not import it.
 */
@Global()
@Module({
  imports: [TenancyModule, QuotasModule],
  controllers: [NotificationLogController, SseStreamController, ProjectionWebhookController, WebhooksController],
  providers: [
    // log: the feeds (Redis or not is their own: connected at module init when REDIS_URL is set), the reader, the polling page
    NotificationFeed,
    EventFeed,
    { provide: NotificationReader, inject: [STORE], useFactory: (s: Store) => new NotificationReader(s.notifications) },
    { provide: StoredProjectionLookup, inject: [STORE], useFactory: (s: Store) => new StoredProjectionLookup(s.projections) },
    {
      provide: NotificationLog,
      inject: [StoredProjectionLookup, NotificationReader],
      useFactory: (c: ProjectionLookup, r: NotificationReader) => new NotificationLog(c, r),
    },
    {
      provide: NotificationRetention,
      inject: [STORE, APP_CONFIG],
      useFactory: (s: Store, c: AppConfig) =>
        new NotificationRetention(s.notifications, s.webhooks, {
          keepCount: c.notifications.keepCount,
          keepMs: c.notifications.keepMs,
          sweepMs: c.notifications.retentionSweepMs,
          deadKeepMs: c.webhooks.deadKeepMs,
        }),
    },
    { provide: LaneApplied, useExisting: NotificationFeed },
    { provide: EventsAppended, useExisting: EventFeed },

    // streams: one hub (admission + the cursors the feeds wake) under both transports; one count for both (StreamLimiter)
    StreamOptions,
    StreamLimits,
    StreamLimiter,
    { provide: StreamSource, useClass: ServiceStreamSource },
    { provide: EventStreamSource, useClass: ServiceEventStreamSource },
    // The tenant's stream quota (all its keys, across instances with Redis) on top of the per-key and per-instance caps.
    { provide: TenantStreamQuota, useExisting: TenantQuotas },
    StreamHub,
    { provide: StreamWakeups, useExisting: StreamHub },
    WebSocketStreamServer,
    SseStream,
    SseEventStream,
    // The log's live streams (GET /events/stream): EventsModule's controller hands SSE here.
    { provide: EventStreamSse, useExisting: SseEventStream },

    // webhooks/: Nest constructs the services; the factories read AppConfig's webhooks section.
    { provide: WebhookDispatcherOptions, inject: [APP_CONFIG], useFactory: (c: AppConfig) => c.webhooks },
    {
      provide: WebhookUrlGuard,
      inject: [APP_CONFIG],
      useFactory: (c: AppConfig) => new WebhookUrlGuard({ allowPrivate: c.webhooks.allowPrivate }),
    },
    {
      provide: WebhookSecrets,
      inject: [WebhookSecretStore, APP_CONFIG],
      useFactory: (store: WebhookSecretStore, c: AppConfig) =>
        new WebhookSecrets(
          store,
          SecretCipher.fromConfig({ keyBase64: c.webhooks.secretsKey, dataDir: c.dataDir }),
          c.webhooks.secretOverlapMs,
        ),
    },
    {
      provide: WebhookSender,
      inject: [WebhookUrlGuard, APP_CONFIG],
      useFactory: (guard: WebhookUrlGuard, c: AppConfig) => new WebhookSender(guard, c.webhooks.timeoutMs),
    },
    { provide: TenantWebhookQuota, useExisting: TenantQuotas },
    WebhookTargets,
    WebhookDeliveryAttempt,
    WebhookDeliveryRound,
    DeliveryTick,
    WebhookDispatcher,
    { provide: NotifiedProjections, useExisting: WebhookDispatcher },
    WebhookEndpoints,
    NotificationSetup,
    WebhookDeliveries,
    {
      provide: WebhookSecretRotation,
      inject: [StoredProjectionLookup, WebhookSecrets],
      useFactory: (c: ProjectionLookup, secrets: WebhookSecrets) => new WebhookSecretRotation(c, secrets),
    },
    { provide: ProjectionNotificationSetup, useExisting: NotificationSetup },
  ],
  // StreamLimiter: the open-stream gauges of GET /metrics (observability/metrics); the two transports: tenant-transfer.
  exports: [
    LaneApplied,
    EventsAppended,
    EventStreamSse,
    ProjectionNotificationSetup,
    StreamLimiter,
    WebSocketStreamServer,
    SseStream,
    // The event webhooks (src/event-webhooks) sign and check URLs as these do.
    WebhookSecrets,
    WebhookUrlGuard,
    WebhookSender,
    TenantWebhookQuota,
  ],
})
export class NotificationsModule implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly dispatcher: WebhookDispatcher,
    private readonly retention: NotificationRetention,
    private readonly ws: WebSocketStreamServer,
    private readonly sse: SseStream,
  ) {}

  onApplicationBootstrap(): void {
    this.ws.attach(this.adapterHost.httpAdapter.getHttpServer());
    this.dispatcher.start();
    this.retention.start();
  }

  /** Streams end before the HTTP server closes, so it does not wait on them. */
  async beforeApplicationShutdown(): Promise<void> {
    this.retention.stop();
    await this.dispatcher.close();
    await this.ws.close();
    this.sse.close();
  }
}
