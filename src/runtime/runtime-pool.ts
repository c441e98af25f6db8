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
  maxExecHosts: 8,
  execIdleMs: 5 * 60_000,
  callDeadlineMs: 5_000,
  compileDeadlineMs: 120_000,
  readyTimeoutMs: 30_000,
  maxLineBytes: 64 * 1024 * 1024,
  maxStateBytes: DEFAULT_MAX_STATE_BYTES,
  maxKeyLength: DEFAULT_MAX_KEY_LENGTH,
  maxResultBytes: DEFAULT_MAX_RESULT_BYTES,
};

/** Gives a host the bytes of a tenant's compiled upload when it needs to (re)load it. */
export type AssemblySource = (tenantId: string, assemblyId: string) => Promise<Buffer>;

interface Executor {
  tenantId: string;
  host: Promise<HostProcess>;
  loaded: Map<string, Promise<void>>;
  lastUsed: number;
  busy: number;
}

/**
 * The service's view of the .NET runtime: one shared compiler host (compiling runs no tenant
 * code, so one warm Roslyn serves every tenant) and one executor host per tenant, started on
 * demand, never sharing loaded assemblies across tenants, replaced when it dies. After a
 * replacement, assemblies are loaded again on first use.
 */
export class RuntimePool {
  private compiler?: Promise<HostProcess>;
  private compileChain: Promise<unknown> = Promise.resolve();
  private readonly executors = new Map<string, Executor>();
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly launcher: HostLauncher,
    private readonly assemblies: AssemblySource,
    private readonly options: RuntimePoolOptions = DEFAULT_POOL_OPTIONS,
  ) {
    this.sweeper = setInterval(() => this.stopIdle(), Math.min(30_000, options.execIdleMs)).unref();
  }

  /** Compiles run one at a time on the shared compiler (a compile is CPU-bound; queueing them keeps deadlines honest). */
  compile(files: { path: string; content: string }[], kind?: 'reducer' | 'projection'): Promise<CompileResult> {
    const run = async () => {
      const host = await this.compilerHost();
      return host.call('compile', { files, kind }, this.options.compileDeadlineMs);
    };
    const result = this.compileChain.then(run, run);
    this.compileChain = result.catch(() => undefined);
    return result;
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
    const hosts = [this.compiler, ...[...this.executors.values()].map((e) => e.host)];
    this.executors.clear();
    this.compiler = undefined;
    await Promise.all(hosts.map(async (h) => (await h?.catch(() => undefined))?.close()));
  }

  private compilerHost(): Promise<HostProcess> {
    return (this.compiler = this.alive(this.compiler, () => this.spawn('compile', 'compiler')));
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
