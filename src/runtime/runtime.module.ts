import { Global, Inject, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { DomainError } from '../common/domain-error';
import { STORE, Store } from '../store/store.port';
import { CompileQueue } from './compile-queue';
import { findRuntimeDll, HostLauncher } from './host-launcher';
import { DEFAULT_POOL_OPTIONS, RuntimePool } from './runtime-pool';

const MB = 1024 * 1024;

export function createRuntimePool(config: AppConfig, store: Store): RuntimePool {
  const heap = config.runtime.execHeapMb * MB;
  const launcher = new HostLauncher(findRuntimeDll(config.runtime.dir), { gcHeapBytes: heap, dataBytes: heap * 4 + 1024 * MB });
  const log = new Logger('Runtime');
  if (!launcher.sandbox.networkNamespace) log.warn('no network namespace available: executor hosts keep network access (tenant code still cannot name a network API)');
  if (!launcher.sandbox.rlimits) log.warn('prlimit not available: executor hosts run without rlimits (the managed heap cap still applies)');
  return new RuntimePool(
    launcher,
    async (tenantId, uploadId) => {
      const bytes = await store.uploads.getAssembly(tenantId, uploadId);
      if (!bytes) throw new DomainError('NOT_FOUND', `no compiled upload '${uploadId}'`);
      return bytes;
    },
    {
      ...DEFAULT_POOL_OPTIONS,
      maxExecHosts: config.runtime.execHosts,
      execIdleMs: config.runtime.execIdleMs,
      callDeadlineMs: config.runtime.callDeadlineMs,
      compileDeadlineMs: config.runtime.compileDeadlineMs,
      compilerHosts: config.runtime.compilerHosts,
    },
  );
}

@Global()
@Module({
  providers: [
    { provide: RuntimePool, inject: [APP_CONFIG, STORE], useFactory: createRuntimePool },
    {
      provide: CompileQueue,
      inject: [STORE, RuntimePool, APP_CONFIG],
      useFactory: (store: Store, pool: RuntimePool, config: AppConfig) =>
        new CompileQueue(store.uploads, pool, {
          concurrency: pool.compileSlots,
          maxPendingPerTenant: config.runtime.uploadPendingMaxPerTenant,
          deadlineMs: pool.compileDeadlineMs,
        }),
    },
  ],
  exports: [RuntimePool, CompileQueue],
})
export class RuntimeModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    private readonly queue: CompileQueue,
    private readonly pool: RuntimePool,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    // Listeners (reducers, projections) are registered during module init, so pending compiles
    // left by a previous run are resumed only now.
    this.pool.startCompilers();
    this.queue.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.queue.close();
    await this.pool.close();
  }
}
