import { BeforeApplicationShutdown, Global, Module, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { NotificationsModule } from '../notifications/notifications.module';
import { QuotasModule } from '../quotas/quotas.module';
import { EventWebhooksAppended } from '../events/append-committed.port';
import { EventDeliveryTick } from './event-delivery-tick';
import { EventWebhookDispatcher } from './event-webhook-dispatcher';
import { EventWebhookDispatcherOptions, EventWebhookRound } from './event-webhook-round';
import { EventWebhooks } from './event-webhooks';
import { EventWebhooksController } from './event-webhooks.controller';

/** Dead letters in a row that suspend an event webhook (docs/notifications.md, "Event webhooks"). */
export const SUSPEND_AFTER_DEAD_LETTERS = 3;

/**
 * Event webhooks (issue 24, item 2): the tenant's log delivered to a URL. Reuses the projection
 * webhooks' signer, sender, SSRF guard, secrets and retry schedule (notifications/webhooks) and the
 * tenant's webhooksInFlight quota (NotificationsModule exports them); EventsModule hands the dispatcher its appends (APPEND_COMMITTED).
 */
@Global()
@Module({
  imports: [NotificationsModule, QuotasModule],
  controllers: [EventWebhooksController],
  providers: [
    {
      provide: EventWebhookDispatcherOptions,
      inject: [APP_CONFIG],
      useFactory: (c: AppConfig): EventWebhookDispatcherOptions => ({
        backoffMs: c.webhooks.backoffMs,
        timeoutMs: c.webhooks.timeoutMs,
        pollMs: c.webhooks.pollMs,
        concurrency: c.webhooks.concurrency,
        suspendAfterDead: SUSPEND_AFTER_DEAD_LETTERS,
      }),
    },
    EventWebhookRound,
    EventDeliveryTick,
    EventWebhookDispatcher,
    EventWebhooks,
    { provide: EventWebhooksAppended, useExisting: EventWebhookDispatcher },
  ],
  exports: [EventWebhooksAppended],
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
