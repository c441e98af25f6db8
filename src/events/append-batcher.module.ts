import { Module, OnApplicationShutdown } from '@nestjs/common';
import { AppMetrics } from '../observability/metrics/app-metrics';
import { STORE, Store } from '../store/store.port';
import { AppendBatcher } from './append-batcher';

/**
 * Group commit on its own, so that ReducersModule (whose state keeper commits through it) and
 * EventsModule (whose pipeline calls that keeper through STATEFUL_APPEND) both import it without
 * importing each other.
 */
@Module({
  providers: [
    {
      provide: AppendBatcher,
      inject: [STORE, AppMetrics],
      useFactory: (store: Store, metrics: AppMetrics) =>
        new AppendBatcher(store.events, { maxConcurrentCommits: store.kind === 'postgres' ? 2 : 1 }, metrics),
    },
  ],
  exports: [AppendBatcher],
})
export class AppendBatcherModule implements OnApplicationShutdown {
  constructor(private readonly batcher: AppendBatcher) {}

  async onApplicationShutdown(): Promise<void> {
    await this.batcher.close();
  }
}
