import { Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppMetrics } from '../observability/metrics/app-metrics';
import { ProjectionCatalog } from '../projections/projection-catalog';
import { ProjectionsModule } from '../projections/projections.module';
import { ReducerCatalog } from '../reducers/reducer-catalog';
import { ReducersModule } from '../reducers/reducers.module';
import { CompileQueue } from '../tenant-code/compiler/compile-queue';
import { RuntimeModule } from '../tenant-code/tenant-code.module';
import { RuntimePool } from '../tenant-code/runtime-pool';
import { STORE, Store } from '../store/store.port';
import { CompileWorker } from './compile-worker';

/**
 * The background compiles, above the modules whose uploads it compiles: it takes from RuntimeModule's
 * CompileQueue and hands each compiled upload to ReducersModule's or ProjectionsModule's catalog.
 * Nothing imports it but AppModule, so neither catalog needs to know it (no cycle, no listener).
 */
@Module({
  imports: [RuntimeModule, ReducersModule, ProjectionsModule],
  providers: [
    {
      provide: CompileWorker,
      inject: [CompileQueue, RuntimePool, STORE, ReducerCatalog, ProjectionCatalog, AppMetrics],
      useFactory: (
        queue: CompileQueue,
        pool: RuntimePool,
        s: Store,
        reducers: ReducerCatalog,
        projections: ProjectionCatalog,
        m: AppMetrics,
      ) => new CompileWorker(queue, pool, s.uploads, reducers, projections, Date.now, m),
    },
  ],
})
export class CompilationModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(private readonly worker: CompileWorker) {}

  onApplicationBootstrap(): void {
    // After RuntimeModule's (a global module's hooks run first): the compilers are started; what a
    // previous run left pending is compiled from here on.
    this.worker.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.worker.close();
  }
}
