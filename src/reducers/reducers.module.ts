import { Module, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { AppendBatcher } from '../events/append-batcher';
import { AppendBatcherModule } from '../events/append-batcher.module';
import { STATEFUL_APPEND } from '../events/append-pipeline';
import { CompileQueue } from '../tenant-code/compiler/compile-queue';
import { TenantCode } from '../tenant-code/tenant-code.port';
import { STORE, Store } from '../store/store.port';
import { AggregateBinder, BindingLookup } from './aggregate-binder';
import { AggregateStateKeeper } from './aggregate-state-keeper';
import { BindingStatus } from './binding-status';
import { ReducerCatalog } from './reducer-catalog';
import { AppMetrics } from '../observability/metrics/app-metrics';
import { ReducerRunner } from './reducer-runner';
import { AggregateTypesController, ReducersController } from './reducers.controller';
import { StateCatchUp } from './state-catch-up';

/**
 * Reducers and aggregate state. Binds the events module's STATEFUL_APPEND to AggregateStateKeeper;
 * exports ReducerCatalog (CompilationModule auto-binds through it).
 */
@Module({
  imports: [AppendBatcherModule],
  controllers: [ReducersController, AggregateTypesController],
  providers: [
    { provide: BindingLookup, inject: [STORE], useFactory: (s: Store) => new BindingLookup(s.bindings) },
    {
      provide: ReducerRunner,
      inject: [TenantCode, APP_CONFIG, AppMetrics],
      useFactory: (pool: TenantCode, c: AppConfig, metrics: AppMetrics) => new ReducerRunner(pool, c.runtime.unavailableWaitMs, metrics),
    },
    {
      provide: AggregateStateKeeper,
      inject: [STORE, BindingLookup, ReducerRunner, AppendBatcher],
      useFactory: (s: Store, lookup: BindingLookup, runner: ReducerRunner, batcher: AppendBatcher) =>
        new AggregateStateKeeper(s.events, s.snapshots, lookup, runner, batcher),
    },
    {
      provide: StateCatchUp,
      inject: [STORE, BindingLookup, AggregateStateKeeper],
      useFactory: (s: Store, lookup: BindingLookup, keeper: AggregateStateKeeper) => new StateCatchUp(s.snapshots, lookup, keeper),
    },
    {
      provide: AggregateBinder,
      inject: [STORE, BindingLookup, StateCatchUp],
      useFactory: (s: Store, lookup: BindingLookup, catchUp: StateCatchUp) => new AggregateBinder(s.bindings, s.uploads, lookup, catchUp),
    },
    {
      provide: ReducerCatalog,
      inject: [STORE, CompileQueue, AggregateBinder],
      useFactory: (s: Store, q: CompileQueue, binder: AggregateBinder) => new ReducerCatalog(s.uploads, q, binder),
    },
    {
      provide: BindingStatus,
      inject: [BindingLookup, StateCatchUp],
      useFactory: (lookup: BindingLookup, catchUp: StateCatchUp) => new BindingStatus(lookup, catchUp),
    },
    { provide: STATEFUL_APPEND, useExisting: AggregateStateKeeper },
  ],
  exports: [STATEFUL_APPEND, ReducerCatalog],
})
export class ReducersModule implements OnApplicationShutdown {
  constructor(private readonly catchUp: StateCatchUp) {}

  async onApplicationShutdown(): Promise<void> {
    await this.catchUp.close();
  }
}
