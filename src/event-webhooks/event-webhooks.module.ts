import { BeforeApplicationShutdown, Global, Module, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { NotificationsModule } from '../notifications/notifications.module';
import { WebhookSecrets } from '../notifications/webhooks/webhook-secrets';
import { WebhookSender } from '../notifications/webhooks/webhook-sender';
import { WebhookUrlGuard } from '../notifications/webhooks/webhook-url-guard';
import { QuotasModule } from '../quotas/quotas.module';
import { TenantQuotas } from '../quotas/tenant-quotas';
import { STORE, Store } from '../store/store.port';
import { EVENT_WEBHOOKS_APPENDED } from '../events/append-committed.port';
import { EventWebhookDispatcher } from './event-webhook-dispatcher';
import { EventWebhooks } from './event-webhooks';
import { EventWebhooksController } from './event-webhooks.controller';

/** Dead letters in a row that suspend an event webhook (docs/notifications.md, "Event webhooks"). */
export const SUSPEND_AFTER_DEAD_LETTERS = 3;

/**
 * Event webhooks (issue 24, item 2): the tenant's log delivered to a URL. Reuses the projection
 * webhooks' signer, sender, SSRF guard, secrets and retry schedule (notifications/webhooks) and the
 * tenant's webhooksInFlight quota; EventsModule hands the dispatcher its appends (APPEND_COMMITTED).
 */
@Global()
@Module({
  imports: [NotificationsModule, QuotasModule],
  controllers: [EventWebhooksController],
  providers: [
    {
      provide: EventWebhookDispatcher,
      inject: [STORE, WebhookSecrets, WebhookUrlGuard, APP_CONFIG, TenantQuotas],
      useFactory: (s: Store, secrets: WebhookSecrets, guard: WebhookUrlGuard, c: AppConfig, quotas: TenantQuotas) =>
        new EventWebhookDispatcher(
          s.eventWebhooks,
          secrets,
          new WebhookSender(guard, c.webhooks.timeoutMs),
          {
            backoffMs: c.webhooks.backoffMs,
            timeoutMs: c.webhooks.timeoutMs,
            pollMs: c.webhooks.pollMs,
            concurrency: c.webhooks.concurrency,
            suspendAfterDead: SUSPEND_AFTER_DEAD_LETTERS,
          },
          quotas,
        ),
    },
    {
      provide: EventWebhooks,
      inject: [STORE, WebhookSecrets, WebhookUrlGuard, TenantQuotas, EventWebhookDispatcher],
      useFactory: (s: Store, secrets: WebhookSecrets, guard: WebhookUrlGuard, quotas: TenantQuotas, d: EventWebhookDispatcher) =>
        new EventWebhooks(s.eventWebhooks, {
          checkUrl: (url) => guard.checkRegistration(url),
          tenantSecret: (t) => secrets.tenantSecret(t),
          limit: (t) => quotas.eventWebhooks(t),
          wake: () => d.wake(),
        }),
    },
    { provide: EVENT_WEBHOOKS_APPENDED, useExisting: EventWebhookDispatcher },
  ],
  exports: [EVENT_WEBHOOKS_APPENDED],
})
export class EventWebhooksModule implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(private readonly dispatcher: EventWebhookDispatcher) {}

  onApplicationBootstrap(): void {
    this.dispatcher.start();
  }

  /** Claims are let go once the attempts under way end, so another instance takes over at once. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.dispatcher.close();
  }
}
