import { Module } from '@nestjs/common';
import { LanesModule } from '../lanes/lanes.module';
import { ReducersModule } from '../reducers/reducers.module';
import { STORE, Store } from '../store/store.port';
import { AppendBatcher } from './append-batcher';
import { AppendBatcherModule } from './append-batcher.module';
import { EventWebhooksModule } from '../event-webhooks/event-webhooks.module';
import { APPEND_COMMITTED, AppendCommitted, appendCommittedToAll, EVENT_WEBHOOKS_APPENDED } from './append-committed.port';
import { AppendPipeline, STATEFUL_APPEND, StatefulAppend } from './append-pipeline';
import { EventAppender } from './event-appender';
import { EventReader } from './event-reader';
import { EventsController } from './events.controller';

/** Appends and reads. The ports its pipeline calls are bound by the modules that own them (reducers, lanes, event webhooks). */
@Module({
  imports: [AppendBatcherModule, ReducersModule, LanesModule, EventWebhooksModule],
  controllers: [EventsController],
  providers: [
    {
      provide: AppendPipeline,
      inject: [AppendBatcher, STATEFUL_APPEND, APPEND_COMMITTED, EVENT_WEBHOOKS_APPENDED],
      useFactory: (b: AppendBatcher, stateful: StatefulAppend, committed: AppendCommitted, hooks: AppendCommitted) =>
        new AppendPipeline(b, stateful, appendCommittedToAll(committed, hooks)),
    },
    { provide: EventAppender, inject: [AppendPipeline], useFactory: (p: AppendPipeline) => new EventAppender(p) },
    { provide: EventReader, inject: [STORE], useFactory: (store: Store) => new EventReader(store.events) },
  ],
  exports: [AppendPipeline, EventReader],
})
export class EventsModule {}
