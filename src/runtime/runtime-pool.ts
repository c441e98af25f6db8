import { HostCallError, HostProcess } from './host-process';
import { HostLauncher } from './host-launcher';
import {
  ApplyGroupPayload,
  ApplyGroupResult,
  CompileResult,
  DEFAULT_MAX_KEY_LENGTH,
  DEFAULT_MAX_RESULT_BYTES,
  DEFAULT_MAX_STATE_BYTES,
  HostMode,
  ResolvedKey,
  WireEvent,
} from './runtime-protocol';

export interface RuntimePoolOptions {
  /** Compiler hosts, each compiling one archive at a time: one slow compile holds up only its own. */
  compilerHosts: number;
  /** Executor hosts alive at once (one per tenant); the least recently used idle one is stopped past it. */
  maxExecHosts: number;
  /** An executor idle this long is stopped. */
  execIdleMs: number;
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
}

export const DEFAULT_POOL_OPTIONS: RuntimePoolOptions = {
  compilerHosts: 2,
  maxExecHosts: 8,
  execIdleMs: 5 * 60_000,
  callDeadlineMs: 5_000,
  compileDeadlineMs: 15_000,
  readyTimeoutMs: 30_000,
  maxLineBytes: 64 * 1024 * 1024,
  maxStateBytes: DEFAULT_MAX_STATE_BYTES,
  maxKeyLength: DEFAULT_MAX_KEY_LENGTH,
  maxResultBytes: DEFAULT_MAX_RESULT_BYTES,
};

/** Gives a host the bytes of a tenant's compiled upload when it needs to (re)load it. */
export type AssemblySource = (tenantId: string, assemblyId: string) => Promise<Buffer>;

interface CompilerSlot {
  host?: Promise<HostProcess>;
  busy: boolean;
}

interface Executor {
  tenantId: string;
  host: Promise<HostProcess>;
  loaded: Map<string, Promise<void>>;
  lastUsed: number;
  busy: number;
}

/**
 * The service's view of the .NET runtime: a few shared compiler hosts (compiling runs no tenant
 * code, so warm Roslyns serve every tenant), each compiling one archive at a time, and one
 * executor host per tenant, started on demand, never sharing loaded assemblies across tenants.
 * A host that dies is replaced: a compiler at once (so that it is warm again when needed), an
 * executor on next use, after which assemblies are loaded again on first use.
 */
export class RuntimePool {
  private readonly compilers: CompilerSlot[];
  private readonly waitingForCompiler: ((slot: CompilerSlot) => void)[] = [];
  private readonly executors = new Map<string, Executor>();
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly launcher: HostLauncher,
    private readonly assemblies: AssemblySource,
    private readonly options: RuntimePoolOptions = DEFAULT_POOL_OPTIONS,
  ) {
    this.sweeper = setInterval(() => this.stopIdle(), Math.min(30_000, options.execIdleMs)).unref();
    this.compilers = Array.from({ length: Math.max(1, options.compilerHosts) }, () => ({ busy: false }));
  }

  get compileDeadlineMs(): number {
    return this.options.compileDeadlineMs;
  }

  /** How many compiles can run at once (one per compiler host). */
  get compileSlots(): number {
    return this.compilers.length;
  }

  /** Starts every compiler host now, so that each has warmed Roslyn before the first upload. */
  startCompilers(): void {
    for (const slot of this.compilers) this.warm(slot);
  }

  /**
   * Compiles on a free compiler host (waiting for one if all are busy) under the compile deadline:
   * past it, that host is killed (TIMEOUT). A host that dies during a compile fails it with
   * CRASHED; one that answers with an error (e.g. out of memory) is stopped too, as it may hold on
   * to what the compile took. Either way a replacement starts at once and warms up.
   */
  async compile(files: { path: string; content: string }[], kind?: 'reducer' | 'projection'): Promise<CompileResult> {
    const slot = await this.freeCompiler();
    let host: HostProcess | undefined;
    try {
      host = await (slot.host = this.alive(slot.host, () => this.spawn('compile', 'compiler')));
      return await host.call('compile', { files, kind }, this.options.compileDeadlineMs);
    } catch (e) {
      host?.kill('CRASHED', 'compiler stopped after a failed compile');
      throw e;
    } finally {
      if (host && !host.alive) this.warm(slot);
      this.releaseCompiler(slot);
    }
  }

  /** For tests and operators: the compiler processes (undefined where none runs). */
  async compilerPids(): Promise<(number | undefined)[]> {
    return Promise.all(this.compilers.map(async (c) => (await c.host?.catch(() => undefined))?.pid));
  }

  async apply(
    tenantId: string,
    assemblyId: string,
    className: string,
    groups: ApplyGroupPayload[],
    deadlineMs = this.options.callDeadlineMs,
  ): Promise<ApplyGroupResult[]> {
    return this.onExecutor(tenantId, assemblyId, async (host) => {
      const { maxStateBytes, maxResultBytes } = this.options;
      const r = await host.call('apply', { assemblyId, className, groups, maxStateBytes, maxResultBytes }, deadlineMs);
      return r.results;
    });
  }

  async resolveKeys(tenantId: string, assemblyId: string, className: string, events: WireEvent[], deadlineMs = this.options.callDeadlineMs): Promise<ResolvedKey[]> {
    return this.onExecutor(tenantId, assemblyId, async (host) => {
      const r = await host.call('resolveKeys', { assemblyId, className, events, maxKeyLength: this.options.maxKeyLength }, deadlineMs);
      return r.keys;
    });
  }

  /** Drops a compiled upload from its tenant's executor (a redeploy, a delete). */
  async unload(tenantId: string, assemblyId: string): Promise<void> {
    const ex = this.executors.get(tenantId);
    if (!ex || !ex.loaded.has(assemblyId)) return;
    ex.loaded.delete(assemblyId);
    const host = await ex.host.catch(() => undefined);
    if (host?.alive) await host.call('unload', { assemblyId }, this.options.callDeadlineMs).catch(() => undefined);
  }

  /** For tests and operators: the executor process of a tenant, if one runs. */
  async executorPid(tenantId: string): Promise<number | undefined> {
    const ex = this.executors.get(tenantId);
    return ex ? (await ex.host.catch(() => undefined))?.pid : undefined;
  }

  async executorStats(tenantId: string): Promise<Record<string, unknown> | undefined> {
    const ex = this.executors.get(tenantId);
    const host = ex ? await ex.host.catch(() => undefined) : undefined;
    return host?.alive ? host.call('stats', { collect: true }, this.options.callDeadlineMs) : undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    const hosts = [...this.compilers.map((c) => c.host), ...[...this.executors.values()].map((e) => e.host)];
    this.executors.clear();
    for (const c of this.compilers) c.host = undefined;
    await Promise.all(hosts.map(async (h) => (await h?.catch(() => undefined))?.close()));
  }

  private freeCompiler(): Promise<CompilerSlot> {
    const free = this.compilers.find((c) => !c.busy);
    if (free) {
      free.busy = true;
      return Promise.resolve(free);
    }
    return new Promise((resolve) => this.waitingForCompiler.push(resolve));
  }

  private releaseCompiler(slot: CompilerSlot): void {
    const next = this.waitingForCompiler.shift();
    if (next) next(slot);
    else slot.busy = false;
  }

  /** (Re)starts a slot's host in the background; a failed start is retried on the slot's next compile. */
  private warm(slot: CompilerSlot): void {
    if (this.closed) return;
    const host = (slot.host = this.alive(slot.host, () => this.spawn('compile', 'compiler')));
    host.catch(() => undefined);
  }

  /**
   * The current host if it is alive, else a new one: a dead host is replaced on next use. The
   * promise is chained (not awaited then replaced) so that concurrent callers share one restart.
   */
  private alive(current: Promise<HostProcess> | undefined, spawn: () => Promise<HostProcess>): Promise<HostProcess> {
    return (current ?? Promise.reject(new Error('not started'))).then((h) => (h.alive ? h : spawn()), spawn);
  }

  private spawn(mode: HostMode, label: string): Promise<HostProcess> {
    if (this.closed) return Promise.reject(new HostCallError('UNAVAILABLE', 'runtime is shutting down'));
    return HostProcess.start({
      mode,
      label,
      launch: this.launcher.launch(mode),
      readyTimeoutMs: this.options.readyTimeoutMs,
      maxLineBytes: this.options.maxLineBytes,
    });
  }

  private async onExecutor<T>(tenantId: string, assemblyId: string, fn: (host: HostProcess) => Promise<T>): Promise<T> {
    const ex = this.executor(tenantId);
    ex.busy++;
    ex.lastUsed = Date.now();
    try {
      const host = await this.executorHost(ex);
      await this.ensureLoaded(ex, host, assemblyId);
      return await fn(host);
    } finally {
      ex.busy--;
      ex.lastUsed = Date.now();
    }
  }

  private executor(tenantId: string): Executor {
    let ex = this.executors.get(tenantId);
    if (!ex) {
      this.evictForRoom();
      const notStarted = Promise.reject(new Error('not started'));
      notStarted.catch(() => undefined);
      ex = { tenantId, host: notStarted, loaded: new Map(), lastUsed: Date.now(), busy: 0 };
      this.executors.set(tenantId, ex);
    }
    return ex;
  }

  private executorHost(ex: Executor): Promise<HostProcess> {
    return (ex.host = this.alive(ex.host, () => {
      // A new process has nothing loaded: forget what the dead one had.
      ex.loaded.clear();
      return this.spawn('exec', `executor[${ex.tenantId.slice(0, 8)}]`);
    }));
  }

  private ensureLoaded(ex: Executor, host: HostProcess, assemblyId: string): Promise<void> {
    let loading = ex.loaded.get(assemblyId);
    if (!loading) {
      loading = (async () => {
        const bytes = await this.assemblies(ex.tenantId, assemblyId);
        await host.call('load', { assemblyId, assembly: bytes.toString('base64') }, this.options.callDeadlineMs);
      })();
      ex.loaded.set(assemblyId, loading);
      // A host that dies is replaced by executorHost, which clears `loaded` for the new one.
      loading.catch(() => ex.loaded.delete(assemblyId));
    }
    return loading;
  }

  private evictForRoom(): void {
    if (this.executors.size < this.options.maxExecHosts) return;
    const idle = [...this.executors.values()].filter((e) => e.busy === 0).sort((a, b) => a.lastUsed - b.lastUsed)[0];
    if (idle) this.stopExecutor(idle);
  }

  private stopIdle(): void {
    const cutoff = Date.now() - this.options.execIdleMs;
    for (const ex of this.executors.values()) if (ex.busy === 0 && ex.lastUsed < cutoff) this.stopExecutor(ex);
  }

  private stopExecutor(ex: Executor): void {
    this.executors.delete(ex.tenantId);
    void ex.host.then((h) => h.close(), () => undefined);
  }
}
