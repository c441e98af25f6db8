import { Module, OnApplicationShutdown } from '@nestjs/common';
import { STORE, Store } from '../store/store.port';
import { AppendBatcher } from './append-batcher';
import { AppendPipeline } from './append-pipeline';
import { EventAppender } from './event-appender';
import { EventReader } from './event-reader';
import { EventsController } from './events.controller';

@Module({
  controllers: [EventsController],
  providers: [
    { provide: AppendBatcher, inject: [STORE], useFactory: (store: Store) => new AppendBatcher(store.events, { maxConcurrentCommits: store.kind === 'postgres' ? 2 : 1 }) },
    { provide: AppendPipeline, inject: [AppendBatcher], useFactory: (b: AppendBatcher) => new AppendPipeline(b) },
    { provide: EventAppender, inject: [AppendPipeline], useFactory: (p: AppendPipeline) => new EventAppender(p) },
    { provide: EventReader, inject: [STORE], useFactory: (store: Store) => new EventReader(store.events) },
  ],
  exports: [AppendBatcher, AppendPipeline, EventReader],
})
export class EventsModule implements OnApplicationShutdown {
  constructor(private readonly batcher: AppendBatcher) {}

  async onApplicationShutdown(): Promise<void> {
    await this.batcher.close();
  }
}
