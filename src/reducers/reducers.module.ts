import { Module, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { AppendBatcher } from '../events/append-batcher';
import { AppendPipeline } from '../events/append-pipeline';
import { EventsModule } from '../events/events.module';
import { CompileQueue } from '../runtime/compile-queue';
import { RuntimePool } from '../runtime/runtime-pool';
import { STORE, Store } from '../store/store.port';
import { AggregateBinder } from './aggregate-binder';
import { AggregateStateKeeper } from './aggregate-state-keeper';
import { ReducerCatalog } from './reducer-catalog';
import { ReducerRunner } from './reducer-runner';
import { AggregateTypesController, ReducersController } from './reducers.controller';
import { StateCatchUp } from './state-catch-up';

@Module({
  imports: [EventsModule],
  controllers: [ReducersController, AggregateTypesController],
  providers: [
    { provide: AggregateBinder, inject: [STORE], useFactory: (s: Store) => new AggregateBinder(s.bindings, s.uploads) },
    {
      provide: ReducerRunner,
      inject: [RuntimePool, APP_CONFIG],
      useFactory: (pool: RuntimePool, c: AppConfig) => new ReducerRunner(pool, c.runtime.unavailableWaitMs),
    },
    {
      provide: AggregateStateKeeper,
      inject: [STORE, AggregateBinder, ReducerRunner, AppendBatcher],
      useFactory: (s: Store, binder: AggregateBinder, runner: ReducerRunner, batcher: AppendBatcher) =>
        new AggregateStateKeeper(s.events, s.snapshots, binder, runner, batcher),
    },
    {
      provide: StateCatchUp,
      inject: [STORE, AggregateBinder, AggregateStateKeeper],
      useFactory: (s: Store, binder: AggregateBinder, keeper: AggregateStateKeeper) => new StateCatchUp(s.snapshots, binder, keeper),
    },
    {
      provide: ReducerCatalog,
      inject: [STORE, CompileQueue, AggregateBinder],
      useFactory: (s: Store, q: CompileQueue, binder: AggregateBinder) => new ReducerCatalog(s.uploads, q, binder),
    },
  ],
})
export class ReducersModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly pipeline: AppendPipeline,
    private readonly keeper: AggregateStateKeeper,
    private readonly binder: AggregateBinder,
    private readonly catchUp: StateCatchUp,
  ) {}

  onModuleInit(): void {
    this.pipeline.register(this.keeper);
    this.binder.onBound((b) => {
      this.keeper.forget(b.tenantId, b.aggregateType);
      this.catchUp.start(b);
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.catchUp.close();
  }
}
