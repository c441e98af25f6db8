import { Logger } from '@nestjs/common';
import { Isolation } from '../config/isolation-settings';
import { AppMetrics, NO_METRICS } from '../observability/metrics/app-metrics';
import { CompilerPool } from './compiler/compiler-pool';
import { Compiler } from './compiler.port';
import { AssemblySource } from './executors/executor-assemblies';
import { Executor } from './executors/executor';
import { ExecutorCall, ExecutorListener } from './executors/executor-call';
import { compileWarmUp, runWarmUp, WARM_UP_TENANT } from './executors/executor-warm-up';
import { MemoryRefusals } from './executors/memory-refusals';
import { ExecutorRoster, Placement } from './executors/executor-roster';
import { HostLauncher } from './host/host-launcher';
import { HostCallError, HostFailure, HostProcess } from './host/host-process';
import { HostSpawner } from './host/host-spawner';
import { ApplyGroupPayload, ApplyGroupResult, BatchItem, CompileResult, HostMode, ResolvedKey, WireEvent } from './host/runtime-protocol';
import { DEFAULT_POOL_OPTIONS, RuntimePoolOptions } from './runtime-pool-options';
import { TenantCode } from './tenant-code.port';
import { ExecutorsState, TenantCodeReadiness } from './tenant-code-readiness.port';

/** What a tenant did to be quarantined, for the log. */
function offenceText(failure: HostFailure, executor: Executor): string {
  if (failure === 'TENANT_MEMORY_EXCEEDED') return `its assemblies went over the per-tenant memory cap in ${executor.label} (${failure})`;
  if (failure === 'HOST_MEMORY_EXHAUSTED') return `${executor.label} ran out of memory that its assemblies hold the most of (${failure})`;
  return `a call ${failure === 'TIMEOUT' ? 'hung' : 'killed'} ${executor.label} (${failure})`;
}

/**
 * The service's view of the .NET runtime: shared compilers (CompilerPool) and executors (which
 * executor a tenant's calls go to: ExecutorRoster; starting their processes: HostSpawner).
 *
 * `shared` isolation (the default): a fixed number of executors, each hosting many tenants'
 * assemblies (each in its own collectible load context). A tenant's calls go to the executor its
 * id hashes to (rendezvous), so its assemblies stay warm there; calls of different tenants waiting
 * for one executor share its round trips. A tenant whose call kills or hangs an executor gets the
 * call's error, then runs in a quarantine executor of its own for a while; the other tenants'
 * calls that were in flight run again on the replacement, without an error.
 *
 * `tenant` isolation: one executor per tenant, started on demand, stopped when idle.
 *
 * Only tenants with calls pending have an entry here: an idle tenant costs no process and no timer.
 */
export class RuntimePool implements TenantCode, Compiler, TenantCodeReadiness, ExecutorListener<Executor> {
  private readonly logger = new Logger('RuntimePool');
  private readonly compilers: CompilerPool;
  private readonly roster: ExecutorRoster;
  private readonly refusals = new MemoryRefusals();
  private readonly sweeper: NodeJS.Timeout;
  private warmUpAssembly?: Buffer;
  private warmUp: { state: 'not-started' | 'starting' | 'started' | 'failed'; error?: string } = { state: 'not-started' };
  private offences = 0;
  /** Offences that were a call holding up other tenants' calls past stallMs (its process replaced early). */
  private stalls = 0;
  /** Calls that ran again after another tenant's call killed their executor. */
  private reruns = 0;
  private closed = false;
  private readonly hosts: HostSpawner;

  constructor(
    launcher: HostLauncher,
    private readonly assemblies: AssemblySource,
    private readonly options: RuntimePoolOptions = DEFAULT_POOL_OPTIONS,
    metrics: AppMetrics = NO_METRICS,
  ) {
    this.hosts = new HostSpawner(launcher, options, metrics);
    this.compilers = new CompilerPool(options.compilerHosts, () => this.spawn('compile', 'compiler'), options.compileDeadlineMs);
    this.roster = new ExecutorRoster(options, (label, how) => this.executor(label, how));
    this.sweeper = setInterval(() => this.sweep(), Math.min(30_000, options.execIdleMs)).unref();
  }

  get isolation(): Isolation {
    return this.options.isolation;
  }

  get compileDeadlineMs(): number {
    return this.compilers.deadlineMs;
  }

  /** How many compiles can run at once (one per compiler host). */
  get compileSlots(): number {
    return this.compilers.size;
  }

  startCompilers(): void {
    this.compilers.start();
  }

  /**
   * shared: starts every executor of the pool now, each answering one request, rather than on the
   * first calls after a (re)start, which would otherwise wait for a process to start (0.2–1.5 s
   * here). Readiness (`executorsState`) waits for it. tenant: nothing (executors are per tenant).
   */
  startExecutors(): Promise<void> {
    if (this.options.isolation !== 'shared') return Promise.resolve();
    this.warmUp = { state: 'starting' };
    return (
      Promise.all(this.roster.shared.map((ex) => ex.prestart()))
        // A failed warm-up costs the first calls their JIT, nothing else: the executors are started.
        .then(() =>
          this.warmUpExecutors().catch((e) =>
            this.logger.warn(`executor warm-up failed (first calls will be slower): ${e instanceof Error ? e.message : e}`),
          ),
        )
        .then(
          () => void (this.warmUp = { state: 'started' }),
          (e) => {
            this.warmUp = { state: 'failed', error: e instanceof Error ? e.message : String(e) };
            this.logger.error(`executors did not start: ${this.warmUp.error}`);
          },
        )
    );
  }

  /** The built-in warm-up upload (executor-warm-up.ts), compiled once; loaded into each shared executor, run once, dropped. */
  private async warmUpExecutors(): Promise<void> {
    const warm = await compileWarmUp(this.compilers);
    this.warmUpAssembly = warm.assembly;
    await runWarmUp(this.roster.shared, warm, this.options);
  }

  /** Whether the pool's executors were started at service start (readiness). */
  get executorsState(): ExecutorsState {
    return { ...this.warmUp, executors: this.roster.shared.length };
  }

  compile(files: { path: string; content: string }[], kind?: 'reducer' | 'projection'): Promise<CompileResult> {
    return this.compilers.compile(files, kind);
  }

  /** Readiness: compiler processes running now, of how many (a dead idle one is restarted). */
  async compilersRunning(): Promise<{ running: number; of: number }> {
    return { running: await this.compilers.running(), of: this.compilers.size };
  }

  /** For tests and operators: the compiler processes (undefined where none runs). */
  compilerPids(): Promise<(number | undefined)[]> {
    return this.compilers.pids();
  }

  /** `urgent`: a request waits for it (see FairCallQueue). */
  async apply(
    tenantId: string,
    assemblyId: string,
    className: string,
    groups: ApplyGroupPayload[],
    deadlineMs = this.options.callDeadlineMs,
    urgent = false,
  ): Promise<ApplyGroupResult[]> {
    const { maxStateBytes, maxResultBytes } = this.options;
    const r = await this.call(
      tenantId,
      assemblyId,
      { op: 'apply', assemblyId, className, groups, maxStateBytes, maxResultBytes },
      deadlineMs,
      urgent,
    );
    return r.results;
  }

  async resolveKeys(
    tenantId: string,
    assemblyId: string,
    className: string,
    events: WireEvent[],
    deadlineMs = this.options.callDeadlineMs,
  ): Promise<ResolvedKey[]> {
    const r = await this.call(
      tenantId,
      assemblyId,
      { op: 'resolveKeys', assemblyId, className, events, maxKeyLength: this.options.maxKeyLength },
      deadlineMs,
    );
    return r.keys;
  }

  /** Drops a compiled upload wherever it is loaded (a redeploy, a delete). */
  async unload(tenantId: string, assemblyId: string): Promise<void> {
    this.refusals.forget(tenantId, assemblyId);
    for (const ex of this.roster.all()) ex.forget(tenantId, assemblyId);
  }

  /** Where the tenant's calls go now. */
  placement(tenantId: string): Placement {
    return this.roster.placement(tenantId);
  }

  /** For tests and operators: the process the tenant's calls go to, if it runs. */
  async executorPid(tenantId: string): Promise<number | undefined> {
    return this.roster.current(tenantId)?.pid;
  }

  /** The host's own stats of the executor the tenant's calls go to (after a full GC). */
  async executorStats(tenantId: string): Promise<Record<string, unknown> | undefined> {
    return this.roster.current(tenantId)?.hostStats(true);
  }

  /** The host ids of the assemblies loaded where the tenant's calls go (tests). */
  loadedAssemblies(tenantId: string): string[] {
    return this.roster.current(tenantId)?.loaded ?? [];
  }

  /** Counters of every executor, for tests, operators and benchmarks. */
  stats() {
    return {
      isolation: this.options.isolation,
      offences: this.offences,
      stalls: this.stalls,
      reruns: this.reruns,
      quarantined: this.roster.quarantinedCount(),
      executors: this.roster.all().map((ex) => ({
        label: ex.label,
        kind: this.roster.kind(ex),
        pid: ex.pid,
        loaded: ex.loaded.length,
        ...ex.counters,
        ...ex.loadCounters,
      })),
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    const executors = this.roster.release();
    await Promise.all([this.compilers.close(), ...executors.map((ex) => ex.close())]);
  }

  // ---- ExecutorListener ------------------------------------------------------------------------

  settled(call: ExecutorCall): void {
    this.roster.settled(call.tenantId);
  }

  offended(executor: Executor, tenantId: string, failure: HostFailure, counted = false): void {
    if (this.closed) return;
    // Its call stalled a shared executor, was moved apart for it and has now failed there: one offence.
    if (counted) return;
    this.offences++;
    // Alone in its own process already: the replacement is its own too.
    if (this.options.isolation === 'tenant') return;
    const { until, strikes } = this.roster.quarantine.offend(tenantId);
    this.logger.warn(
      `tenant ${tenantId}: ${offenceText(failure, executor)}; ` +
        `its calls run in a quarantine executor until ${new Date(until).toISOString()} (offence ${strikes})`,
    );
  }

  refused(tenantId: string, assemblyId: string, error: HostCallError): void {
    this.refusals.remember(tenantId, assemblyId, error);
  }

  stalled(executor: Executor, tenantId: string, ms: number): void {
    if (this.closed) return;
    this.offences++;
    this.stalls++;
    const { until, strikes } = this.roster.quarantine.offend(tenantId);
    this.logger.warn(
      `tenant ${tenantId}: a call ran past ${ms} ms in ${executor.label} while other tenants' calls waited; the process is replaced, ` +
        `the call runs again in a quarantine executor, where its calls run until ${new Date(until).toISOString()} (offence ${strikes})`,
    );
  }

  interrupted(executor: Executor, calls: ExecutorCall[], offenders: string[]): void {
    this.reruns += calls.length;
    const tenants = [...new Set([...calls.map((c) => c.tenantId), ...offenders])];
    const stay: ExecutorCall[] = [];
    for (const tenantId of tenants) {
      const mine = calls.filter((c) => c.tenantId === tenantId);
      const target = this.closed ? executor : this.roster.route(tenantId);
      if (target === executor) {
        stay.push(...mine);
        continue;
      }
      // It moves (into quarantine): its interrupted calls first, then those it had queued here.
      this.roster.moved(tenantId, target);
      for (const c of [...mine, ...executor.takeQueued(tenantId)]) target.submit(c);
    }
    if (stay.length) executor.requeueFront(stay);
  }

  // ---- calls -----------------------------------------------------------------------------------

  private call(tenantId: string, assemblyId: string, item: BatchItem, deadlineMs: number, urgent = false): Promise<any> {
    if (this.closed) return Promise.reject(new HostCallError('UNAVAILABLE', 'runtime is shutting down'));
    const refused = this.refusals.refusal(tenantId, assemblyId, this.roster.quarantined(tenantId));
    if (refused) return Promise.reject(refused);
    return new Promise((resolve, reject) => {
      const executor = this.roster.enter(tenantId);
      executor.submit({ tenantId, assemblyId, item, deadlineMs, urgent, resolve, reject, reruns: 0 });
    });
  }

  private executor(label: string, { lowPriority = false, stallMs = 0 } = {}): Executor {
    const o = this.options;
    return new Executor(
      {
        label,
        spawn: () => this.spawn('exec', label, lowPriority),
        // The warm-up's assembly is the pool's own; every other comes from the store.
        assemblies: (tenantId, assemblyId) =>
          tenantId === WARM_UP_TENANT && this.warmUpAssembly ? Promise.resolve(this.warmUpAssembly) : this.assemblies(tenantId, assemblyId),
        // What loaded uploads are charged (DLLs and statics) stays under half the heap: the rest is the calls'.
        budget: { ...o.assemblyBudget, maxBytes: Math.min(o.assemblyBudget.maxBytes, Math.floor(o.execHeapBytes / 2)) },
        tenantCallsInFlight: o.tenantCallsInFlight,
        itemsPerRequest: o.itemsPerRequest,
        requestsInFlight: 2,
        requestDeadlineMs: o.callDeadlineMs,
        tenantMemoryBytes: o.tenantMemoryBytes,
        heapBytes: o.execHeapBytes,
        stallMs,
      },
      this,
    );
  }

  /** Quarantine executors run at the lowest priority (HostSpawner.spawn). */
  private spawn(mode: HostMode, label: string, lowPriority = false): Promise<HostProcess> {
    if (this.closed) return Promise.reject(new HostCallError('UNAVAILABLE', 'runtime is shutting down'));
    return this.hosts.spawn(mode, label, lowPriority);
  }

  /** One timer for the whole pool: idle executors stop; quarantines that are over release their executors. */
  private sweep(): void {
    const cutoff = Date.now() - this.options.execIdleMs;
    for (const ex of this.roster.sweep(cutoff)) void ex.close();
    for (const ex of this.roster.all()) if (ex.idle && ex.lastUsed < cutoff) void ex.stop();
    this.roster.quarantine.prune();
    this.refusals.prune((t) => this.roster.quarantined(t));
  }
}
