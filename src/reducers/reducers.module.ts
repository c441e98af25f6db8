import { Global, Module, OnApplicationShutdown } from '@nestjs/common';
import { AppendBatcherModule } from '../events/append-batcher.module';
import { StatefulAppend } from '../events/stateful-append.port';
import { AggregateBinder, BindingLookup } from './aggregate-binder';
import { AggregateStateKeeper } from './aggregate-state-keeper';
import { BindingStatus } from './binding-status';
import { FailedAggregates } from './failed-aggregates';
import { ReducerCatalog } from './reducer-catalog';
import { ReducerRunner } from './reducer-runner';
import { AggregateTypesController, ReducersController } from './reducers.controller';
import { StateCatchUp } from './state-catch-up';
import { Rebound } from './rebound.port';

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
    BindingLookup,
    ReducerRunner,
    AggregateStateKeeper,
    StateCatchUp,
    AggregateBinder,
    ReducerCatalog,
    BindingStatus,
    FailedAggregates,
    { provide: Rebound, useExisting: StateCatchUp },
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
