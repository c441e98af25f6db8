import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '../common/domain-error';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { AppMetrics } from '../observability/metrics/app-metrics';
import { UploadRepository } from '../store/upload-repository.port';
import { RuntimePool } from './runtime-pool';
import { DEFAULT_POOL_OPTIONS, RuntimePoolOptions } from './runtime-pool-options';
import { SandboxedLauncher } from './sandboxed-launcher';
import { TransientAssemblies } from './transient-assemblies';

/** RuntimePool's settings from the RUNTIME_* variables. */
export function runtimePoolOptions(config: AppConfig): RuntimePoolOptions {
  return {
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
  };
}

/**
 * Makes the service's RuntimePool (TenantCodeModule's one factory for it: RUNTIME_ISOLATION chooses
 * shared or per-tenant executors): its hosts started by the sandboxed launcher, the compiled uploads
 * read from the store (a dry run's candidate from TransientAssemblies first).
 */
@Injectable()
export class RuntimePoolFactory {
  constructor(
    private readonly sandboxed: SandboxedLauncher,
    private readonly uploads: UploadRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: AppMetrics,
    private readonly transient: TransientAssemblies,
  ) {}

  create(): RuntimePool {
    return new RuntimePool(
      this.sandboxed.launcher,
      async (tenantId, uploadId) => {
        const held = this.transient.get(tenantId, uploadId);
        if (held) return held;
        const bytes = await this.uploads.getAssembly(tenantId, uploadId);
        if (!bytes) throw new DomainError('NOT_FOUND', `no compiled upload '${uploadId}'`);
        return bytes;
      },
      runtimePoolOptions(this.config),
      this.metrics,
    );
  }
}
