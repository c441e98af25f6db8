import { AppMetrics } from '../observability/metrics/app-metrics';
import { Global, Inject, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { DomainError } from '../common/domain-error';
import { STORE, Store } from '../store/store.port';
import { CompileQueue } from './compiler/compile-queue';
import { findRuntimeDll, HostLauncher } from './host/host-launcher';
import { RuntimePool } from './runtime-pool';
import { DEFAULT_POOL_OPTIONS } from './runtime-pool-options';
import { SANDBOX_STATUS, SandboxStatus, verifySandbox } from './host/sandbox-check';

const MB = 1024 * 1024;

/** Heap cap and RLIMIT_DATA (4× the cap + 1 GiB: the GC reserves address space well past what it commits). */
const limits = (heapMb: number) => ({ gcHeapBytes: heapMb * MB, dataBytes: heapMb * 4 * MB + 1024 * MB });

const SANDBOXED_LAUNCHER = Symbol('SANDBOXED_LAUNCHER');

interface SandboxedLauncher {
  launcher: HostLauncher;
  status: SandboxStatus;
}

/** Checks every sandbox fence before the service starts (strict: a missing one refuses the start). */
export async function createLauncher(config: AppConfig): Promise<SandboxedLauncher> {
  const launcher = new HostLauncher(findRuntimeDll(config.runtime.dir), {
    exec: limits(config.runtime.execHeapMb),
    compile: limits(config.runtime.compileHeapMb),
    sandbox: config.runtime.sandbox,
  });
  const status = await verifySandbox(launcher);
  const log = new Logger('Runtime');
  for (const [fence, why] of Object.entries(status.missing))
    log.warn(`RUNTIME_SANDBOX=${status.mode}: runtime hosts run without the '${fence}' fence: ${why}`);
  if (status.runtimeError) log.error(`the runtime host does not start: ${status.runtimeError}`);
  return { launcher, status };
}

export function createRuntimePool(config: AppConfig, store: Store, launcher: HostLauncher, metrics?: AppMetrics): RuntimePool {
  return new RuntimePool(
    launcher,
    async (tenantId, uploadId) => {
      const bytes = await store.uploads.getAssembly(tenantId, uploadId);
      if (!bytes) throw new DomainError('NOT_FOUND', `no compiled upload '${uploadId}'`);
      return bytes;
    },
    {
      ...DEFAULT_POOL_OPTIONS,
      isolation: config.runtime.isolation,
      execHosts: config.runtime.execHosts,
      execIdleMs: config.runtime.execIdleMs,
      assemblyBudget: { maxCount: config.runtime.execAssemblyBudget, maxBytes: config.runtime.execAssemblyBudgetBytes },
      tenantCallsInFlight: config.runtime.execTenantCalls,
      quarantine: { baseMs: config.runtime.quarantineMs, maxMs: config.runtime.quarantineMaxMs },
      stallMs: config.runtime.execStallMs,
      callDeadlineMs: config.runtime.callDeadlineMs,
      compileDeadlineMs: config.runtime.compileDeadlineMs,
      maxStateBytes: config.runtime.maxStateBytes,
      tenantMemoryBytes: config.runtime.tenantMemoryMb * 1024 * 1024,
      execHeapBytes: config.runtime.execHeapMb * 1024 * 1024,
      compilerHosts: config.runtime.compilerHosts,
    },
    metrics,
  );
}

@Global()
@Module({
  providers: [
    { provide: SANDBOXED_LAUNCHER, inject: [APP_CONFIG], useFactory: createLauncher },
    { provide: SANDBOX_STATUS, inject: [SANDBOXED_LAUNCHER], useFactory: (s: SandboxedLauncher) => s.status },
    {
      provide: RuntimePool,
      inject: [APP_CONFIG, STORE, SANDBOXED_LAUNCHER, AppMetrics],
      useFactory: (c: AppConfig, st: Store, s: SandboxedLauncher, m: AppMetrics) => createRuntimePool(c, st, s.launcher, m),
    },
    {
      provide: CompileQueue,
      inject: [STORE, RuntimePool, APP_CONFIG],
      useFactory: (store: Store, pool: RuntimePool, config: AppConfig) =>
        new CompileQueue(store.uploads, {
          concurrency: pool.compileSlots,
          maxPendingPerTenant: config.runtime.uploadPendingMaxPerTenant,
          deadlineMs: pool.compileDeadlineMs,
        }),
    },
  ],
  exports: [RuntimePool, CompileQueue, SANDBOX_STATUS],
})
export class RuntimeModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    private readonly queue: CompileQueue,
    private readonly pool: RuntimePool,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
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
