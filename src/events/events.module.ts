import { Inject, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { LanesModule } from '../lanes/lanes.module';
import { NotificationsModule } from '../notifications/notifications.module';
import { ReducersModule } from '../reducers/reducers.module';
import { STORE, Store } from '../store/store.port';
import { AppendBatcher } from './append-batcher';
import { AppendBatcherModule } from './append-batcher.module';
import { EventWebhooksModule } from '../event-webhooks/event-webhooks.module';
import { APPEND_COMMITTED, AppendCommitted, appendCommittedToAll, EVENT_WEBHOOKS_APPENDED, EventsAppended } from './append-committed.port';
import { AppendPipeline, STATEFUL_APPEND, StatefulAppend } from './append-pipeline';
import { EventAppender } from './event-appender';
import { EventReader } from './event-reader';
import { EventEraser } from './event-eraser';
import { EventsController } from './events.controller';
import { IdempotencyKeySweep } from './idempotency-key-sweep';

/** Appends and reads. The ports its pipeline calls are bound by the modules that own them (reducers, lanes, event webhooks). */
@Module({
  // NotificationsModule: EventsAppended and EventStreamSse (the log's live streams live beside the projection streams);
  // EventWebhooksModule: EVENT_WEBHOOKS_APPENDED (the event webhooks' dispatcher).
  imports: [AppendBatcherModule, ReducersModule, LanesModule, NotificationsModule, EventWebhooksModule],
  controllers: [EventsController],
  providers: [
    {
      provide: AppendPipeline,
      inject: [AppendBatcher, STATEFUL_APPEND, APPEND_COMMITTED, EVENT_WEBHOOKS_APPENDED, EventsAppended, APP_CONFIG],
      useFactory: (
        b: AppendBatcher,
        stateful: StatefulAppend,
        committed: AppendCommitted,
        hooks: AppendCommitted,
        live: AppendCommitted,
        config: AppConfig,
      ) => new AppendPipeline(b, stateful, appendCommittedToAll(committed, hooks), live, config.idempotency.killAfterCommitKey),
    },
    {
      provide: EventAppender,
      inject: [AppendPipeline, APP_CONFIG],
      useFactory: (p: AppendPipeline, config: AppConfig) => new EventAppender(p, config.idempotency.keepMs),
    },
    {
      provide: IdempotencyKeySweep,
      inject: [STORE, APP_CONFIG],
      useFactory: (store: Store, config: AppConfig) =>
        new IdempotencyKeySweep(store.idempotencyKeys, config.idempotency.keepMs, config.idempotency.sweepMs),
    },
    {
      provide: EventEraser,
      inject: [STORE, STATEFUL_APPEND, APPEND_COMMITTED, EVENT_WEBHOOKS_APPENDED, EventsAppended],
      useFactory: (store: Store, stateful: StatefulAppend, committed: AppendCommitted, hooks: AppendCommitted, live: AppendCommitted) =>
        new EventEraser(store.erasure, stateful, appendCommittedToAll(committed, hooks), live),
    },
    { provide: EventReader, inject: [STORE], useFactory: (store: Store) => new EventReader(store.events) },
  ],
  exports: [AppendPipeline, EventReader],
})
export class EventsModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(@Inject(IdempotencyKeySweep) private readonly sweep: IdempotencyKeySweep) {}

  onApplicationBootstrap(): void {
    this.sweep.start();
  }

  onApplicationShutdown(): void {
    this.sweep.stop();
  }
}
