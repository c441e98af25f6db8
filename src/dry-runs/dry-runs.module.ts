import { Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { STORE, Store } from '../store/store.port';
import { Compiler } from '../tenant-code/compiler.port';
import { TenantCode } from '../tenant-code/tenant-code.port';
import { TransientAssemblies } from '../tenant-code/transient-assemblies';
import { DryRuns } from './dry-runs';
import { ProjectionDryRunsController, ReducerDryRunsController } from './dry-runs.controller';
import { ProjectionDryRun } from './projection-dry-run';
import { ReducerDryRun } from './reducer-dry-run';

/**
 * Dry runs of candidate projections and reducers (issue 27 item 4). Reads the store (log, live lanes,
 * catalog, bindings) and runs tenant code through the TenantCode and Compiler ports; imported by
 * AppModule only (nothing of the service depends on it).
 */
@Module({
  controllers: [ProjectionDryRunsController, ReducerDryRunsController],
  providers: [
    {
      provide: DryRuns,
      inject: [STORE, Compiler, TenantCode, TransientAssemblies, APP_CONFIG],
      useFactory: (s: Store, compiler: Compiler, code: TenantCode, transient: TransientAssemblies, c: AppConfig) =>
        new DryRuns(
          compiler,
          code,
          transient,
          s.projections,
          s.bindings,
          new ProjectionDryRun(s.events, s.lanes.reads, code),
          new ReducerDryRun(s.events, code),
          c.dryRun,
        ),
    },
  ],
})
export class DryRunsModule {}
