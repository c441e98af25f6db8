import { BeforeApplicationShutdown, Global, Inject, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { EVENTS_APPENDED } from '../events/append-committed.port';
import { EVENT_STREAM_SSE, EventStreamSse } from '../events/event-stream.port';
import { LaneApplied } from '../lanes/lane-applied.port';
import { AppMetrics } from '../observability/metrics/app-metrics';
import { PROJECTION_NOTIFICATION_SETUP } from '../projections/projection-notification-setup.port';
import { QuotasModule } from '../quotas/quotas.module';
import { TenantQuotas } from '../quotas/tenant-quotas';
import { STORE, Store } from '../store/store.port';
import { TenancyModule } from '../tenancy/tenancy.module';
import { TenantDirectory } from '../tenancy/tenant-directory';
import { EventFeed } from './log/event-feed';
import { NotificationFeed } from './log/notification-feed';
import { NotificationLog } from './log/notification-log';
import { NotificationLogController } from './log/notification-log.controller';
import { NotificationReader } from './log/notification-reader';
import { NotificationRetention } from './log/notification-retention';
import { ProjectionLookup, StoredProjectionLookup } from './log/projection-lookup';
import { ServiceEventStreamSource } from './streams/event-stream-source';
import { ServiceStreamSource } from './streams/service-stream-source';
import { SseStream } from './streams/sse-stream';
import { SseStreamController } from './streams/sse-stream.controller';
import { StreamLimiter } from './streams/stream-limiter';
import { WebSocketStreamServer } from './streams/websocket-stream';
import { NotificationSetup } from './webhooks/notification-setup';
import { SecretCipher } from './webhooks/secret-cipher';
import { WebhookDeliveries } from './webhooks/webhook-deliveries';
import { WebhookDispatcher } from './webhooks/webhook-dispatcher';
import { WebhookEndpoints } from './webhooks/webhook-endpoints';
import { WebhookSecretRotation } from './webhooks/webhook-secret-rotation';
import { WebhookSecrets } from './webhooks/webhook-secrets';
import { WebhookSender } from './webhooks/webhook-sender';
import { WebhookUrlGuard } from './webhooks/webhook-url-guard';
import { ProjectionWebhookController, WebhooksController } from './webhooks/webhooks.controller';

/** Notifications a stream connection reads (and writes to its socket) at a time. */
const STREAM_PAGE = 200;

/**
 * The notification log (log/) and what pushes it out: the streams (streams/: WebSocket, SSE) and
 * the webhooks (webhooks/). One module, as the three share the feed and the store; the folders
 * depend on log/ and not on each other. Binds LaneApplied (lanes) to NotificationFeed and
 * PROJECTION_NOTIFICATION_SETUP (the projection catalog) to NotificationSetup; imports neither.
 */
// Global: binds LaneApplied for LanesModule, which must not import this module (the port inverts the layers).
@Global()
@Module({
  imports: [TenancyModule, QuotasModule],
  controllers: [NotificationLogController, SseStreamController, ProjectionWebhookController, WebhooksController],
  providers: [
    {
      provide: NotificationFeed,
      inject: [APP_CONFIG, WebhookDispatcher],
      useFactory: async (c: AppConfig, webhooks: WebhookDispatcher) => {
        const feed = new NotificationFeed(webhooks);
        if (c.redisUrl) await feed.connect(c.redisUrl);
        return feed;
      },
    },
    {
      provide: EventFeed,
      inject: [APP_CONFIG],
      useFactory: async (c: AppConfig) => {
        const feed = new EventFeed();
        if (c.redisUrl) await feed.connect(c.redisUrl);
        return feed;
      },
    },
    {
      provide: ServiceEventStreamSource,
      inject: [STORE, EventFeed],
      useFactory: (s: Store, f: EventFeed) => new ServiceEventStreamSource(s.events, f),
    },
    {
      provide: WebhookUrlGuard,
      inject: [APP_CONFIG],
      useFactory: (c: AppConfig) => new WebhookUrlGuard({ allowPrivate: c.webhooks.allowPrivate }),
    },
    {
      provide: WebhookSecrets,
      inject: [STORE, APP_CONFIG],
      useFactory: (s: Store, c: AppConfig) =>
        new WebhookSecrets(
          s.webhooks,
          SecretCipher.fromConfig({ keyBase64: c.webhooks.secretsKey, dataDir: c.dataDir }),
          c.webhooks.secretOverlapMs,
        ),
    },
    { provide: NotificationReader, inject: [STORE], useFactory: (s: Store) => new NotificationReader(s.notifications) },
    {
      provide: ServiceStreamSource,
      inject: [TenantDirectory, STORE, NotificationReader, NotificationFeed],
      useFactory: (t: TenantDirectory, s: Store, r: NotificationReader, f: NotificationFeed) =>
        new ServiceStreamSource(t, s.projections, r, f),
    },
    // One count for both transports: a key's WebSockets and SSE streams share its cap.
    {
      provide: StreamLimiter,
      inject: [APP_CONFIG],
      useFactory: (c: AppConfig) =>
        new StreamLimiter({ perKey: c.notifications.maxStreamsPerKey, perInstance: c.notifications.maxStreamsPerInstance }),
    },
    // The tenant's stream quota (all its keys, across instances with Redis) on top of the per-key and per-instance caps.
    {
      provide: WebSocketStreamServer,
      inject: [ServiceStreamSource, APP_CONFIG, StreamLimiter, TenantQuotas, ServiceEventStreamSource],
      useFactory: (
        src: ServiceStreamSource,
        c: AppConfig,
        limiter: StreamLimiter,
        quotas: TenantQuotas,
        events: ServiceEventStreamSource,
      ) =>
        new WebSocketStreamServer(
          src,
          { pingIntervalMs: c.notifications.pingMs, maxBufferedBytes: c.notifications.maxBufferedBytes, pageSize: STREAM_PAGE },
          limiter,
          quotas,
          events,
        ),
    },
    {
      provide: SseStream,
      inject: [ServiceStreamSource, APP_CONFIG, StreamLimiter, TenantQuotas, ServiceEventStreamSource],
      useFactory: (
        src: ServiceStreamSource,
        c: AppConfig,
        limiter: StreamLimiter,
        quotas: TenantQuotas,
        events: ServiceEventStreamSource,
      ) =>
        new SseStream(
          src,
          { heartbeatMs: c.notifications.sseHeartbeatMs, maxBufferedBytes: c.notifications.maxBufferedBytes, pageSize: STREAM_PAGE },
          limiter,
          quotas,
          events,
        ),
    },
    // The log's live streams (GET /events/stream): EventsModule's append pipeline rings the feed, its controller hands SSE here.
    { provide: EVENTS_APPENDED, useExisting: EventFeed },
    {
      provide: EVENT_STREAM_SSE,
      inject: [SseStream],
      useFactory: (sse: SseStream): EventStreamSse => ({ serve: (...args) => sse.serveEvents(...args) }),
    },
    {
      provide: WebhookDispatcher,
      inject: [STORE, WebhookSecrets, WebhookUrlGuard, APP_CONFIG, TenantQuotas, AppMetrics],
      useFactory: (s: Store, secrets: WebhookSecrets, guard: WebhookUrlGuard, c: AppConfig, quotas: TenantQuotas, metrics: AppMetrics) =>
        new WebhookDispatcher(
          s.webhooks,
          s.notifications,
          s.projections,
          secrets,
          new WebhookSender(guard, c.webhooks.timeoutMs),
          c.webhooks,
          quotas,
          metrics,
        ),
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
    {
      provide: WebhookEndpoints,
      inject: [STORE, TenantQuotas, WebhookDispatcher],
      useFactory: (s: Store, quotas: TenantQuotas, d: WebhookDispatcher) => new WebhookEndpoints(s.webhooks, s.notifications, quotas, d),
    },
    {
      provide: NotificationSetup,
      inject: [WebhookSecrets, STORE, WebhookUrlGuard, WebhookEndpoints],
      useFactory: (secrets: WebhookSecrets, s: Store, guard: WebhookUrlGuard, endpoints: WebhookEndpoints) =>
        new NotificationSetup(secrets, s.webhooks, guard, endpoints),
    },
    { provide: LaneApplied, useExisting: NotificationFeed },
    { provide: PROJECTION_NOTIFICATION_SETUP, useExisting: NotificationSetup },
    { provide: StoredProjectionLookup, inject: [STORE], useFactory: (s: Store) => new StoredProjectionLookup(s.projections) },
    {
      provide: NotificationLog,
      inject: [StoredProjectionLookup, NotificationReader],
      useFactory: (c: ProjectionLookup, r: NotificationReader) => new NotificationLog(c, r),
    },
    {
      provide: WebhookSecretRotation,
      inject: [StoredProjectionLookup, WebhookSecrets],
      useFactory: (c: ProjectionLookup, secrets: WebhookSecrets) => new WebhookSecretRotation(c, secrets),
    },
    {
      provide: WebhookDeliveries,
      inject: [StoredProjectionLookup, STORE, WebhookEndpoints],
      useFactory: (c: ProjectionLookup, s: Store, endpoints: WebhookEndpoints) => new WebhookDeliveries(c, s.webhooks, endpoints),
    },
  ],
  // StreamLimiter: the open-stream gauges of GET /metrics (observability/metrics).
  exports: [
    LaneApplied,
    PROJECTION_NOTIFICATION_SETUP,
    StreamLimiter,
    WebSocketStreamServer,
    SseStream,
    EVENTS_APPENDED,
    EVENT_STREAM_SSE,
    // The event webhooks (src/event-webhooks) sign and check URLs as these do.
    WebhookSecrets,
    WebhookUrlGuard,
  ],
})
export class NotificationsModule implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly feed: NotificationFeed,
    private readonly eventFeed: EventFeed,
    @Inject(STORE) private readonly store: Store,
    private readonly dispatcher: WebhookDispatcher,
    private readonly retention: NotificationRetention,
    private readonly ws: WebSocketStreamServer,
    private readonly sse: SseStream,
    private readonly reader: NotificationReader,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.feed.startPolling((t, p) => this.reader.headSequence(t, p), this.config.notifications.pollMs);
    this.eventFeed.startPolling((t) => this.store.events.headPosition(t), this.config.notifications.pollMs);
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

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.feed.close(), this.eventFeed.close()]);
  }
}
