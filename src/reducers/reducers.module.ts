import { Global, Module, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { AppendBatcher } from '../events/append-batcher';
import { AppendBatcherModule } from '../events/append-batcher.module';
import { StatefulAppend } from '../events/stateful-append.port';
import { CompileQueue } from '../runtime/compile-queue';
import { RuntimePool } from '../runtime/runtime-pool';
import { EventLog } from '../store/event-log.port';
import { BindingRepository, SnapshotRepository } from '../store/reducer-state.port';
import { UploadRepository } from '../store/upload-repository.port';
import { AggregateBinder, BindingLookup } from './aggregate-binder';
import { AggregateStateKeeper } from './aggregate-state-keeper';
import { BindingStatus } from './binding-status';
import { ReducerCatalog } from './reducer-catalog';
import { AppMetrics } from '../observability/metrics/app-metrics';
import { ReducerRunner } from './reducer-runner';
import { AggregateTypesController, ReducersController } from './reducers.controller';
import { StateCatchUp } from './state-catch-up';

/**
 * Reducers and aggregate state. Binds the events module's StatefulAppend port to AggregateStateKeeper
 * (global, so that EventsModule takes the port without importing this module); exports ReducerCatalog
 * (CompilationModule auto-binds through it).
 */
@Global()
@Module({
  imports: [AppendBatcherModule],
  controllers: [ReducersController, AggregateTypesController],
  providers: [
    { provide: BindingLookup, inject: [BindingRepository], useFactory: (bindings: BindingRepository) => new BindingLookup(bindings) },
    {
      provide: ReducerRunner,
      inject: [RuntimePool, APP_CONFIG, AppMetrics],
      useFactory: (pool: RuntimePool, c: AppConfig, metrics: AppMetrics) => new ReducerRunner(pool, c.runtime.unavailableWaitMs, metrics),
    },
    {
      provide: AggregateStateKeeper,
      inject: [EventLog, SnapshotRepository, BindingLookup, ReducerRunner, AppendBatcher],
      useFactory: (events: EventLog, snapshots: SnapshotRepository, lookup: BindingLookup, runner: ReducerRunner, batcher: AppendBatcher) =>
        new AggregateStateKeeper(events, snapshots, lookup, runner, batcher),
    },
    {
      provide: StateCatchUp,
      inject: [SnapshotRepository, BindingLookup, AggregateStateKeeper],
      useFactory: (snapshots: SnapshotRepository, lookup: BindingLookup, keeper: AggregateStateKeeper) =>
        new StateCatchUp(snapshots, lookup, keeper),
    },
    {
      provide: AggregateBinder,
      inject: [BindingRepository, UploadRepository, BindingLookup, StateCatchUp],
      useFactory: (bindings: BindingRepository, uploads: UploadRepository, lookup: BindingLookup, catchUp: StateCatchUp) =>
        new AggregateBinder(bindings, uploads, lookup, catchUp),
    },
    {
      provide: ReducerCatalog,
      inject: [UploadRepository, CompileQueue, AggregateBinder],
      useFactory: (uploads: UploadRepository, q: CompileQueue, binder: AggregateBinder) => new ReducerCatalog(uploads, q, binder),
    },
    {
      provide: BindingStatus,
      inject: [BindingLookup, StateCatchUp],
      useFactory: (lookup: BindingLookup, catchUp: StateCatchUp) => new BindingStatus(lookup, catchUp),
    },
    { provide: StatefulAppend, useExisting: AggregateStateKeeper },
  ],
  exports: [StatefulAppend, ReducerCatalog],
})
export class ReducersModule implements OnApplicationShutdown {
  constructor(private readonly catchUp: StateCatchUp) {}

  async onApplicationShutdown(): Promise<void> {
    await this.catchUp.close();
  }
}
