import { Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ProjectionsModule } from '../projections/projections.module';
import { ReducersModule } from '../reducers/reducers.module';
import { CompileWorker } from './compile-worker';

/**
 * The background compiles, above the modules whose uploads it compiles: it takes from TenantCodeModule's
 * CompileQueue, compiles on its Compiler (both global) and hands each compiled upload to ReducersModule's
 * or ProjectionsModule's catalog. Nothing imports it but AppModule, so neither catalog needs to know it
 * (no cycle, no listener).
 */
@Module({
  imports: [ReducersModule, ProjectionsModule],
  providers: [CompileWorker],
})
export class CompilationModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(private readonly worker: CompileWorker) {}

  onApplicationBootstrap(): void {
    // After TenantCodeModule's (a global module's hooks run first): the compilers are started; what a
    // previous run left pending is compiled from here on.
    this.worker.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.worker.close();
  }
}
