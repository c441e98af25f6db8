import { Global, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { CompileQueue, CompileQueueSettings } from './compiler/compile-queue';
import { SourceValidator } from './compiler/source-validator';
import { Compiler } from './compiler.port';
import { SANDBOX_STATUS } from './host/sandbox-check';
import { RuntimePool } from './runtime-pool';
import { RuntimePoolFactory } from './runtime-pool.factory';
import { createLauncher, SandboxedLauncher } from './sandboxed-launcher';
import { TenantCode } from './tenant-code.port';
import { TenantCodeReadiness } from './tenant-code-readiness.port';
import { TransientAssemblies } from './transient-assemblies';

/**
 * The tenants' compiled code: the .NET hosts (runtime/) that compile and run it, behind the ports
 * TenantCode (reducers, lanes), Compiler (compilation/) and TenantCodeReadiness (health), all bound
 * to the one RuntimePool. Global: the consumers depend on the ports, never import this module.
 */
@Global()
@Module({
  providers: [
    // The real choices: the sandbox fences found at start (strict refuses to start without one)…
    { provide: SandboxedLauncher, inject: [APP_CONFIG], useFactory: createLauncher },
    { provide: SANDBOX_STATUS, inject: [SandboxedLauncher], useFactory: (s: SandboxedLauncher) => s.status },
    // …and shared or per-tenant executors (RUNTIME_ISOLATION).
    // A dry run's candidate assemblies (no upload): the executors' source reads them first.
    TransientAssemblies,
    RuntimePoolFactory,
    { provide: RuntimePool, inject: [RuntimePoolFactory], useFactory: (f: RuntimePoolFactory) => f.create() },
    { provide: TenantCode, useExisting: RuntimePool },
    { provide: Compiler, useExisting: RuntimePool },
    { provide: TenantCodeReadiness, useExisting: RuntimePool },
    {
      provide: CompileQueueSettings,
      inject: [RuntimePool, APP_CONFIG],
      useFactory: (pool: RuntimePool, config: AppConfig): CompileQueueSettings => ({
        concurrency: pool.compileSlots,
        maxPendingPerTenant: config.runtime.uploadPendingMaxPerTenant,
        deadlineMs: pool.compileDeadlineMs,
      }),
    },
    CompileQueue,
    SourceValidator,
  ],
  // RuntimePool itself: for the composition (metrics' executor gauges, tenant-transfer's removal).
  exports: [RuntimePool, TenantCode, Compiler, TenantCodeReadiness, CompileQueue, SourceValidator, SANDBOX_STATUS, TransientAssemblies],
})
export class TenantCodeModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    private readonly queue: CompileQueue,
    private readonly pool: RuntimePool,
  ) {}

  onApplicationBootstrap(): void {
    // Before CompilationModule's (a global module's hooks run first), whose CompileWorker then takes
    // the compiles a previous run left pending.
    this.pool.startCompilers();
    // Readiness waits for these: the first appends after a restart find their executor running.
    void this.pool.startExecutors();
  }

  async onApplicationShutdown(): Promise<void> {
    // The compiles running end first (whichever module's hook runs first), then the compilers are stopped.
    await this.queue.close();
    await this.pool.close();
  }
}
