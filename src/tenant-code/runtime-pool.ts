import { AppMetrics, NO_METRICS } from '../observability/metrics/app-metrics';
import { Logger } from '@nestjs/common';
import * as fs from 'node:fs';
import { AssemblyBudgetOptions } from './executors/assembly-budget';
import { CompilerPool } from './compiler/compiler-pool';
import { AssemblySource, Executor, ExecutorCall, ExecutorListener } from './executors/executor';
import { HostCallError, HostFailure, HostProcess } from './host/host-process';
import { HostLauncher } from './host/host-launcher';
import {
  ApplyGroupPayload,
  ApplyGroupResult,
  BatchItem,
  CompileResult,
  DEFAULT_MAX_KEY_LENGTH,
  DEFAULT_MAX_RESULT_BYTES,
  DEFAULT_MAX_STATE_BYTES,
  HostMode,
  ResolvedKey,
  WireEvent,
} from './host/runtime-protocol';
import { QuarantineOptions, QuarantineBook, rendezvousSlot } from './executors/tenant-placement';
import { MemoryRefusals } from './executors/memory-refusals';

import { defaultExecHosts, Isolation } from '../config/isolation-settings';
import { WARM_UP_ASSEMBLY, WARM_UP_SOURCES, WARM_UP_TENANT, warmUpEvent } from './executors/executor-warm-up';

export type { AssemblySource } from './executors/executor';
export type { Isolation } from '../config/isolation-settings';

export interface RuntimePoolOptions {
  isolation: Isolation;
  /**
   * shared: the executor processes (fixed); tenant: executor processes alive at once (the least
   * recently used idle one is stopped past it).
   */
  execHosts: number;
  /** An executor idle this long is stopped (it starts again on the next call). */
  execIdleMs: number;
  /** Per executor: assemblies loaded at once and their DLL bytes; past either, the least recently used is unloaded. */
  assemblyBudget: AssemblyBudgetOptions;
  /** shared: a tenant whose call killed or hung an executor runs apart this long (doubling on each repeat, up to maxMs). */
  quarantine: QuarantineOptions;
  /**
   * shared: a call running this long in a shared executor while other tenants' calls wait behind it
   * gets the process replaced at once (the waiting calls run on the new one; the slow call runs
   * again in its tenant's quarantine executor); 0: only at the deadline.
   */
  stallMs: number;
  /** Calls of one tenant sent to an executor and unanswered at once (the rest wait, other tenants' calls go first). */
  tenantCallsInFlight: number;
  /** Calls carried by one batch request to an executor. */
  itemsPerRequest: number;
  /** Compiler hosts, each compiling one archive at a time: one slow compile holds up only its own. */
  compilerHosts: number;
  callDeadlineMs: number;
  compileDeadlineMs: number;
  readyTimeoutMs: number;
  maxLineBytes: number;
  /** A state whose JSON is longer fails its event with STATE_TOO_LARGE, in the host, before it is written. */
  maxStateBytes: number;
  /** A key from ResolveKey that is longer gets KEY_TOO_LONG, in the host, instead of being written. */
  maxKeyLength: number;
  /** An apply response stops growing about here: groups past it come back truncated (never empty). */
  maxResultBytes: number;
  /** What one tenant's assemblies may hold in one executor (image, statics, runners); past it TENANT_MEMORY_EXCEEDED, an offence. */
  tenantMemoryBytes: number;
  /** An executor's heap limit (RUNTIME_EXEC_HEAP_MB): the measure of whose memory killed it (Executor). */
  execHeapBytes: number;
}

export const DEFAULT_POOL_OPTIONS: RuntimePoolOptions = {
  isolation: 'shared',
  execHosts: defaultExecHosts('shared'),
  execIdleMs: 5 * 60_000,
  assemblyBudget: { maxCount: 1_000, maxBytes: 256 * 1024 * 1024 },
  quarantine: { baseMs: 60_000, maxMs: 3_600_000 },
  stallMs: 500,
  tenantCallsInFlight: 8,
  itemsPerRequest: 64,
  compilerHosts: 2,
  callDeadlineMs: 5_000,
  compileDeadlineMs: 15_000,
  readyTimeoutMs: 30_000,
  maxLineBytes: 64 * 1024 * 1024,
  maxStateBytes: DEFAULT_MAX_STATE_BYTES,
  maxKeyLength: DEFAULT_MAX_KEY_LENGTH,
  maxResultBytes: DEFAULT_MAX_RESULT_BYTES,
  tenantMemoryBytes: 32 * 1024 * 1024,
  execHeapBytes: 256 * 1024 * 1024,
};

/** coreutils' nice, if the machine has it (quarantine executors run at the lowest priority). */
const NICE = ['/usr/bin/nice', '/bin/nice'].find((p) => fs.existsSync(p));
/**
 * util-linux's chrt, if the machine has it: quarantine executors also run under SCHED_IDLE. Nice 19 alone
 * was measured not to be enough on 2 cores: a quarantined spinner still took 67–99 % of a core and the
 * innocents' throughput fell by a third (a nice-19 task keeps a core until the scheduler's next tick;
 * an idle-policy task yields at once to any normal one that wakes).
 */
const CHRT = ['/usr/bin/chrt', '/bin/chrt'].find((p) => fs.existsSync(p));

/** What a tenant did to be quarantined, for the log. */
function offenceText(failure: HostFailure, executor: Executor): string {
  if (failure === 'TENANT_MEMORY_EXCEEDED') return `its assemblies went over the per-tenant memory cap in ${executor.label} (${failure})`;
  if (failure === 'HOST_MEMORY_EXHAUSTED') return `${executor.label} ran out of memory that its assemblies hold the most of (${failure})`;
  return `a call ${failure === 'TIMEOUT' ? 'hung' : 'killed'} ${executor.label} (${failure})`;
}

/** Where a tenant's calls go now (tests and operators). */
export type Placement = { kind: 'shared'; slot: number } | { kind: 'quarantine'; until: number } | { kind: 'tenant' };

/**
 * The service's view of the .NET runtime: shared compilers (CompilerPool) and executors.
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
export class RuntimePool implements ExecutorListener {
  private readonly logger = new Logger('RuntimePool');
  private readonly compilers: CompilerPool;
  private readonly shared: Executor[] = [];
  /** tenant isolation: each tenant's executor; shared isolation: the quarantined tenants' executors. */
  private readonly own = new Map<string, Executor>();
  private readonly quarantine: QuarantineBook;
  private readonly refusals = new MemoryRefusals();
  /** Tenants with calls pending, and the executor those went to (a tenant changes executor only once drained, or when blamed). */
  private readonly active = new Map<string, { executor: Executor; pending: number }>();
  private readonly sweeper: NodeJS.Timeout;
  private warmUpAssembly?: Buffer;
  private warmUp: { state: 'not-started' | 'starting' | 'started' | 'failed'; error?: string } = { state: 'not-started' };
  private offences = 0;
  /** Offences that were a call holding up other tenants' calls past stallMs (its process replaced early). */
  private stalls = 0;
  /** Calls that ran again after another tenant's call killed their executor. */
  private reruns = 0;
  private closed = false;
  /** Processes started per executor label ('compiler' for the compiler slots): beyond the first, a restart (metrics). */
  private readonly starts = new Map<string, number>();

  constructor(
    private readonly launcher: HostLauncher,
    private readonly assemblies: AssemblySource,
    private readonly options: RuntimePoolOptions = DEFAULT_POOL_OPTIONS,
    private readonly metrics: AppMetrics = NO_METRICS,
  ) {
    this.compilers = new CompilerPool(options.compilerHosts, () => this.spawn('compile', 'compiler'), options.compileDeadlineMs);
    this.quarantine = new QuarantineBook(options.quarantine);
    if (options.isolation === 'shared') {
      for (let i = 0; i < Math.max(1, options.execHosts); i++)
        this.shared.push(this.executor(`executor[shared-${i}]`, { stallMs: options.stallMs }));
    }
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
      Promise.all(this.shared.map((ex) => ex.prestart()))
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
    const compiled = await this.compilers.compile(WARM_UP_SOURCES);
    if (!compiled.ok) throw new Error(`the warm-up sources did not compile: ${compiled.compilationError}`);
    this.warmUpAssembly = Buffer.from(compiled.assembly, 'base64');
    const className = (suffix: string) => compiled.discovered.find((d) => d.className.endsWith(suffix))!.className;
    const [reducer, projection] = [className('WarmUpReducer'), className('WarmUpProjection')];
    const run = (ex: Executor, item: BatchItem) =>
      new Promise((resolve, reject) =>
        ex.submit({
          tenantId: WARM_UP_TENANT,
          assemblyId: WARM_UP_ASSEMBLY,
          item,
          deadlineMs: this.options.callDeadlineMs,
          resolve,
          reject,
          reruns: 0,
        }),
      );
    const { maxStateBytes, maxResultBytes, maxKeyLength } = this.options;
    await Promise.all(
      this.shared.map(async (ex) => {
        await run(ex, {
          op: 'apply',
          assemblyId: WARM_UP_ASSEMBLY,
          className: reducer,
          groups: [{ state: null, events: [warmUpEvent()] }],
          maxStateBytes,
          maxResultBytes,
        });
        await run(ex, { op: 'resolveKeys', assemblyId: WARM_UP_ASSEMBLY, className: projection, events: [warmUpEvent()], maxKeyLength });
        ex.forget(WARM_UP_TENANT, WARM_UP_ASSEMBLY);
      }),
    );
  }

  /** Whether the pool's executors were started at service start (readiness). */
  get executorsState(): { state: 'not-started' | 'starting' | 'started' | 'failed'; error?: string; executors: number } {
    return { ...this.warmUp, executors: this.shared.length };
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
    for (const ex of this.executors()) ex.forget(tenantId, assemblyId);
  }

  /** Where the tenant's calls go now. */
  placement(tenantId: string): Placement {
    if (this.options.isolation === 'tenant') return { kind: 'tenant' };
    const until = this.quarantine.quarantinedUntil(tenantId);
    const act = this.active.get(tenantId);
    if (until !== undefined || (act && this.isQuarantineExecutor(act.executor))) return { kind: 'quarantine', until: until ?? Date.now() };
    return { kind: 'shared', slot: this.slotOf(tenantId) };
  }

  /** For tests and operators: the process the tenant's calls go to, if it runs. */
  async executorPid(tenantId: string): Promise<number | undefined> {
    return this.current(tenantId)?.pid;
  }

  /** The host's own stats of the executor the tenant's calls go to (after a full GC). */
  async executorStats(tenantId: string): Promise<Record<string, unknown> | undefined> {
    return this.current(tenantId)?.hostStats(true);
  }

  /** The host ids of the assemblies loaded where the tenant's calls go (tests). */
  loadedAssemblies(tenantId: string): string[] {
    return this.current(tenantId)?.loaded ?? [];
  }

  /** Counters of every executor, for tests, operators and benchmarks. */
  stats() {
    const kind = (ex: Executor) => (this.shared.includes(ex) ? 'shared' : this.options.isolation === 'tenant' ? 'tenant' : 'quarantine');
    return {
      isolation: this.options.isolation,
      offences: this.offences,
      stalls: this.stalls,
      reruns: this.reruns,
      quarantined: [...this.own.keys()].filter((t) => this.quarantine.quarantinedUntil(t) !== undefined).length,
      executors: this.executors().map((ex) => ({
        label: ex.label,
        kind: kind(ex),
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
    const executors = this.executors();
    this.own.clear();
    await Promise.all([this.compilers.close(), ...executors.map((ex) => ex.close())]);
  }

  // ---- ExecutorListener ------------------------------------------------------------------------

  settled(call: ExecutorCall): void {
    const act = this.active.get(call.tenantId);
    if (act && --act.pending <= 0) this.active.delete(call.tenantId);
  }

  offended(executor: Executor, tenantId: string, failure: HostFailure, counted = false): void {
    if (this.closed) return;
    // Its call stalled a shared executor, was moved apart for it and has now failed there: one offence.
    if (counted) return;
    this.offences++;
    // Alone in its own process already: the replacement is its own too.
    if (this.options.isolation === 'tenant') return;
    const { until, strikes } = this.quarantine.offend(tenantId);
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
    const { until, strikes } = this.quarantine.offend(tenantId);
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
      const target = this.closed ? executor : this.route(tenantId);
      if (target === executor) {
        stay.push(...mine);
        continue;
      }
      // It moves (into quarantine): its interrupted calls first, then those it had queued here.
      const act = this.active.get(tenantId);
      if (act) act.executor = target;
      for (const c of [...mine, ...executor.takeQueued(tenantId)]) target.submit(c);
    }
    if (stay.length) executor.requeueFront(stay);
  }

  // ---- routing ---------------------------------------------------------------------------------

  private call(tenantId: string, assemblyId: string, item: BatchItem, deadlineMs: number, urgent = false): Promise<any> {
    if (this.closed) return Promise.reject(new HostCallError('UNAVAILABLE', 'runtime is shutting down'));
    const refused = this.refusals.refusal(tenantId, assemblyId, this.quarantine.quarantinedUntil(tenantId) !== undefined);
    if (refused) return Promise.reject(refused);
    return new Promise((resolve, reject) => {
      const executor = this.route(tenantId);
      let act = this.active.get(tenantId);
      if (!act) this.active.set(tenantId, (act = { executor, pending: 0 }));
      act.executor = executor;
      act.pending++;
      executor.submit({ tenantId, assemblyId, item, deadlineMs, urgent, resolve, reject, reruns: 0 });
    });
  }

  /**
   * The executor for a tenant's next call. A tenant leaving quarantine goes back only once its
   * calls there are answered, so that its calls keep their order; one entering quarantine goes at
   * once (its calls are moved by `interrupted`).
   */
  private route(tenantId: string): Executor {
    const want = this.wanted(tenantId);
    const act = this.active.get(tenantId);
    if (act && act.pending > 0 && act.executor !== want && !this.isQuarantineExecutor(want)) return act.executor;
    return want;
  }

  private wanted(tenantId: string): Executor {
    if (this.options.isolation === 'tenant') return this.tenantExecutor(tenantId);
    if (this.quarantine.quarantinedUntil(tenantId) !== undefined) return this.quarantineExecutor(tenantId);
    return this.shared[this.slotOf(tenantId)];
  }

  /** Where a call would go now, without starting anything. */
  private current(tenantId: string): Executor | undefined {
    const act = this.active.get(tenantId);
    if (act) return act.executor;
    if (this.options.isolation === 'tenant') return this.own.get(tenantId);
    if (this.quarantine.quarantinedUntil(tenantId) !== undefined) return this.own.get(tenantId);
    return this.shared[this.slotOf(tenantId)];
  }

  private slotOf(tenantId: string): number {
    return rendezvousSlot(tenantId, this.shared.length);
  }

  private tenantExecutor(tenantId: string): Executor {
    let ex = this.own.get(tenantId);
    if (ex) return ex;
    if (this.own.size >= this.options.execHosts) {
      // Make room: the least recently used executor with nothing to do.
      const idle = [...this.own].filter(([t, e]) => e.idle && !this.active.has(t)).sort((a, b) => a[1].lastUsed - b[1].lastUsed)[0];
      if (idle) {
        this.own.delete(idle[0]);
        void idle[1].close();
      }
    }
    ex = this.executor(`executor[tenant:${tenantId.slice(0, 8)}]`);
    this.own.set(tenantId, ex);
    return ex;
  }

  /**
   * A quarantined tenant's own executor. Past `execHosts` quarantined tenants at once, newcomers
   * share the existing quarantine executors (offenders among themselves, never with the others).
   */
  private quarantineExecutor(tenantId: string): Executor {
    let ex = this.own.get(tenantId);
    if (ex) return ex;
    const existing = [...new Set(this.own.values())];
    ex =
      existing.length >= Math.max(1, this.options.execHosts)
        ? existing[rendezvousSlot(tenantId, existing.length)]
        : this.executor(`executor[quarantine:${tenantId.slice(0, 8)}]`, { lowPriority: true });
    this.own.set(tenantId, ex);
    return ex;
  }

  private isQuarantineExecutor(ex: Executor): boolean {
    return this.options.isolation === 'shared' && !this.shared.includes(ex);
  }

  private executors(): Executor[] {
    return [...this.shared, ...new Set(this.own.values())];
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

  /**
   * `lowPriority` (quarantine executors): the whole sandboxed chain runs under `chrt --idle 0` and `nice -n 19`, and the
   * host sets its own scheduling group (kernel autogroup: bwrap's new session is one) to nice 19
   * too — the nice value alone counts only inside the group — so a tenant whose calls spin until
   * their deadline burns only the CPU nobody else wants. `nice` execs, like every wrapper of the
   * chain: the process Node holds is still bwrap.
   */
  private spawn(mode: HostMode, label: string, lowPriority = false): Promise<HostProcess> {
    if (this.closed) return Promise.reject(new HostCallError('UNAVAILABLE', 'runtime is shutting down'));
    let launch = this.launcher.launch(mode, { lowPriority });
    if (lowPriority && NICE) launch = { ...launch, command: NICE, args: ['-n', '19', launch.command, ...launch.args] };
    if (lowPriority && CHRT) launch = { ...launch, command: CHRT, args: ['--idle', '0', launch.command, ...launch.args] };
    const started = (this.starts.get(label) ?? 0) + 1;
    this.starts.set(label, started);
    this.metrics.hostStarted(mode === 'compile' ? 'compile' : 'exec', started > (mode === 'compile' ? this.options.compilerHosts : 1));
    return HostProcess.start({
      mode,
      label,
      launch,
      readyTimeoutMs: this.options.readyTimeoutMs,
      maxLineBytes: this.options.maxLineBytes,
    });
  }

  /** One timer for the whole pool: idle executors stop; quarantines that are over release their executors. */
  private sweep(): void {
    const cutoff = Date.now() - this.options.execIdleMs;
    const before = new Set(this.own.values());
    for (const [tenantId, ex] of this.own) {
      const over = this.options.isolation === 'tenant' ? ex.lastUsed < cutoff : this.quarantine.quarantinedUntil(tenantId) === undefined;
      if (over && ex.idle && !this.active.has(tenantId)) this.own.delete(tenantId);
    }
    const kept = new Set(this.own.values());
    for (const ex of before) if (!kept.has(ex)) void ex.close();
    for (const ex of this.executors()) if (ex.idle && ex.lastUsed < cutoff) void ex.stop();
    this.quarantine.prune();
    this.refusals.prune((t) => this.quarantine.quarantinedUntil(t) !== undefined);
  }
}
