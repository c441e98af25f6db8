import { Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppendBatcherModule } from './append-batcher.module';
import { AppendPipeline } from './append-pipeline';
import { EventAppender } from './event-appender';
import { EventReader } from './event-reader';
import { EventEraser } from './event-eraser';
import { EventsController } from './events.controller';
import { EventsDcbController } from './events-dcb.controller';
import { IdempotencyKeySweep } from './idempotency-key-sweep';

/**
 * Appends and reads. The ports its pipeline calls (StatefulAppend, AppendCommitted,
 * EventWebhooksAppended, EventsAppended, EventStreamSse) are bound by the global modules that own
 * them (reducers, lanes, event webhooks, notifications): this module imports none of them.
 */
@Module({
  imports: [AppendBatcherModule],
  controllers: [EventsController, EventsDcbController],
  providers: [AppendPipeline, EventAppender, IdempotencyKeySweep, EventEraser, EventReader],
  exports: [AppendPipeline, EventReader],
})
export class EventsModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(private readonly sweep: IdempotencyKeySweep) {}

  onApplicationBootstrap(): void {
    this.sweep.start();
  }

  onApplicationShutdown(): void {
    this.sweep.stop();
  }
}
