import { ExecutorAssemblies } from './executor-assemblies';
import { countRequest, ExecutorCall, ExecutorCounters, ExecutorListener, ExecutorOptions } from './executor-call';
import { DeathReports } from './death-report';
import { FairCallQueue } from './fair-call-queue';
import { StallWatch } from './stall-watch';
import { HostCallError, HostFailure, HostItem, HostProcess, HostStall } from '../host/host-process';
import { BatchItem } from '../host/runtime-protocol';

/** Failures that end the host process. */
const DEATHS: ReadonlySet<HostFailure> = new Set(['TIMEOUT', 'CRASHED', 'PROTOCOL']);
/** A call interrupted this often by other calls' crashes fails instead of going round again. */
const MAX_RERUNS = 3;

/**
 * One executor process slot: the host process (started on demand, replaced when it dies), the
 * tenants' assemblies loaded in it (ExecutorAssemblies), and the calls waiting for it, served to
 * tenants in turn (FairCallQueue). Calls waiting when a request can go are sent together as one
 * batch request, whatever their tenant: one round trip for all of them, answered item by item.
 *
 * When the host dies or hangs, the call it was running is known (HostCallError.position): that
 * call fails and its tenant is reported (`offended`); every other call it had been sent never ran,
 * and goes back to the pool (`interrupted`) to run again, on this executor's replacement or
 * wherever its tenant goes now (DeathReports gathers both per death; StallWatch, a shared
 * executor's call holding up other tenants').
 */
export class Executor {
  readonly counters: ExecutorCounters = { requests: 0, items: 0, sharedRequests: 0, maxTenantsInRequest: 0, starts: 0 };
  private readonly queue: FairCallQueue<ExecutorCall>;
  private readonly assemblies: ExecutorAssemblies;
  private readonly deaths: DeathReports<Executor>;
  private host?: HostProcess;
  private starting = false;
  /** Callers of `prestart` waiting for the process. */
  private startWaiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  private requests = 0;
  private scheduled = false;
  private readonly stalls = new StallWatch();
  /** A process being replaced because its memory is held by loaded code: the call it was running is not to blame. */
  private exhausted?: HostProcess;
  /** Batches sent to the host and not yet settled, oldest first (which calls wait behind a stalled one). */
  private readonly batches = new Set<ExecutorCall[]>();
  private closed = false;
  lastUsed = Date.now();

  constructor(
    private readonly options: ExecutorOptions,
    private readonly listener: ExecutorListener<Executor>,
  ) {
    this.deaths = new DeathReports(this, listener);
    this.queue = new FairCallQueue(options.tenantCallsInFlight);
    this.assemblies = new ExecutorAssemblies({
      source: options.assemblies,
      budget: options.budget,
      requestDeadlineMs: options.requestDeadlineMs,
      tenantMemoryBytes: options.tenantMemoryBytes,
      fetched: () => this.schedule(),
      memoryExceeded: (tenantId, assemblyId, error) => {
        this.deaths.blame(tenantId, 'TENANT_MEMORY_EXCEEDED');
        this.listener.refused(tenantId, assemblyId, error);
      },
      loadKilledHost: (host, tenantId, failure) => {
        this.lost(host);
        this.deaths.blame(tenantId, failure);
      },
    });
  }

  get label(): string {
    return this.options.label;
  }

  /** Nothing queued, nothing sent. */
  get idle(): boolean {
    return this.queue.size === 0 && this.requests === 0;
  }

  get pid(): number | undefined {
    return this.host?.alive ? this.host.pid : undefined;
  }

  /** Host ids of the assemblies loaded in the running host (tests, operators). */
  get loaded(): string[] {
    return this.assemblies.loaded;
  }

  get loadCounters(): { loads: number; unloads: number } {
    return this.assemblies.counters;
  }

  submit(call: ExecutorCall): void {
    if (this.closed) return this.refuse(call);
    this.assemblies.pin(call.tenantId, call.assemblyId);
    this.lastUsed = Date.now();
    this.queue.push(call);
    this.schedule();
  }

  /** Interrupted calls that stay here: in front of their tenants' queues, in order. */
  requeueFront(calls: ExecutorCall[]): void {
    if (this.closed) return calls.forEach((c) => this.refuse(c));
    for (const c of calls) this.assemblies.pin(c.tenantId, c.assemblyId);
    this.queue.unshift(calls);
    this.schedule();
  }

  /** A tenant's queued calls, in order, taken away (the tenant moves to another executor). */
  takeQueued(tenantId: string): ExecutorCall[] {
    const calls = this.queue.removeTenant(tenantId);
    for (const c of calls) this.assemblies.unpin(this.assemblies.get(c.tenantId, c.assemblyId));
    return calls;
  }

  /** The upload is gone (a redeploy, a delete): unload it now, or once the calls that need it are answered. */
  forget(tenantId: string, assemblyId: string): void {
    this.assemblies.forget(tenantId, assemblyId);
  }

  /** The host's own stats (loaded assemblies, heap, batches…), when it runs. */
  async hostStats(collect = false): Promise<Record<string, unknown> | undefined> {
    const host = this.host;
    return host?.alive ? host.call('stats', { collect }, this.options.requestDeadlineMs) : undefined;
  }

  /**
   * Starts the process now rather than on the first call (service start: the first calls after a
   * restart must not wait for it), and sends it one request so that its request path has run once.
   */
  prestart(): Promise<void> {
    const ready = this.host?.alive
      ? Promise.resolve()
      : new Promise<void>((resolve, reject) => {
          this.startWaiters.push({ resolve, reject });
          this.start();
        });
    return ready.then(async () => {
      const host = this.host;
      if (host?.alive) await host.call('ping', {}, this.options.requestDeadlineMs);
    });
  }

  /** Stops the process of an idle executor (it starts again on the next call). */
  async stop(): Promise<void> {
    const host = this.host;
    if (!host) return;
    this.lost(host);
    await host.close();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const c of this.queue.drain()) this.finish(c, () => c.reject(new HostCallError('UNAVAILABLE', 'runtime is shutting down')));
    await this.stop();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // A microtask: every call submitted in the same tick (a coalesced flush) goes in one request.
    queueMicrotask(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    if (this.closed) return;
    if (this.stalls.pending && this.replaceStalled()) return;
    while (this.requests < this.options.requestsInFlight && this.queue.size > 0) {
      const host = this.host;
      if (!host?.alive) return this.start();
      const calls = this.queue.take(this.options.itemsPerRequest, (c) =>
        this.assemblies.ready(this.assemblies.get(c.tenantId, c.assemblyId)),
      );
      if (!calls.length) return;
      this.send(host, calls);
    }
  }

  private start(): void {
    if (this.starting || this.closed) return;
    this.starting = true;
    this.options.spawn().then(
      (host) => {
        this.starting = false;
        this.counters.starts++;
        this.host = host;
        this.assemblies.attach(host);
        host.onExit(() => this.lost(host));
        for (const w of this.startWaiters.splice(0)) w.resolve();
        if (this.options.stallMs > 0) host.watchStalls(this.options.stallMs, (stall) => this.onStall(host, stall));
        if (this.closed) void host.close();
        else this.pump();
      },
      (e) => {
        this.starting = false;
        // Nothing can run here now: every waiting call fails (callers decide whether to wait, e.g. 503 after a while).
        const err = e instanceof HostCallError ? e : new HostCallError('UNAVAILABLE', String(e));
        for (const w of this.startWaiters.splice(0)) w.reject(err);
        for (const c of this.queue.drain()) this.finish(c, () => c.reject(err));
      },
    );
  }

  /** The host died or was stopped: nothing is loaded any more; the next call starts a new one. */
  private lost(host: HostProcess): void {
    if (this.host !== host) return;
    this.host = undefined;
    this.assemblies.detach();
    if (this.queue.size) this.schedule();
  }

  private send(host: HostProcess, calls: ExecutorCall[]): void {
    const sent: ExecutorCall[] = [];
    const items: BatchItem[] = [];
    for (const c of calls) {
      const a = this.assemblies.get(c.tenantId, c.assemblyId)!;
      if (a.fetchError !== undefined) {
        // Every call waiting for it fails; the entry goes with the last one, so the next call asks the store again.
        const e = a.fetchError;
        this.queue.settled(c.tenantId);
        this.finish(c, () => c.reject(e));
        continue;
      }
      // Loaded ahead of this request if it is not (the host runs requests in order).
      this.assemblies.prepare(a);
      items.push({ ...c.item, assemblyId: a.hostId });
      sent.push(c);
    }
    if (!sent.length) return;
    countRequest(this.counters, sent);
    this.requests++;
    this.batches.add(sent);
    host
      .callItems(
        'batch',
        { items },
        sent.map((c) => c.deadlineMs),
        (item) => this.onItem(sent[item.index], item),
        sent,
      )
      .then(
        // The error only when some item went unanswered: an Error (its stack) per batch is measurable on the append path.
        () => {
          if (sent.some((c) => !c.settled))
            this.failUnanswered(sent, new HostCallError('PROTOCOL', `${this.label}: a batch ended without answering every item`));
        },
        (e) => this.onBatchFailed(host, sent, e),
      )
      .finally(() => {
        this.requests--;
        this.batches.delete(sent);
        this.schedule();
      });
  }

  /** The host has been running one call for `stallMs`: act now if other tenants wait, else when one comes (pump). */
  private onStall(host: HostProcess, stall: HostStall): void {
    if (this.stalls.report(host, this.host, (stall.tag as ExecutorCall[])[stall.itemIndex], stall.ms)) this.schedule();
  }

  /**
   * A call has been running past `stallMs` and calls of other tenants wait (queued, or sent behind
   * it): the process is replaced now rather than at the call's deadline. The stalled call is not
   * failed: its tenant is reported (`stalled`, it is moved apart), and it goes back with every call
   * sent and not answered (`interrupted`), to run again — reducers and key resolvers are pure — the
   * others on this executor's new process, its tenant's wherever that tenant goes now.
   */
  private replaceStalled(): boolean {
    const due = this.stalls.due(this.host, (tenantId) => this.othersWaiting(tenantId));
    if (!due) return false;
    const { host, call, ms } = due;
    this.listener.stalled(this, call.tenantId, ms);
    host.kill('CRASHED', `host replaced: a call ran past ${ms} ms while other tenants' calls waited`);
    return true;
  }

  private othersWaiting(tenantId: string): boolean {
    if (this.queue.hasOtherThan(tenantId)) return true;
    for (const batch of this.batches) for (const c of batch) if (!c.settled && c.tenantId !== tenantId) return true;
    return false;
  }

  private onItem(call: ExecutorCall, item: HostItem<any>): void {
    if (!call || call.settled) return;
    // Left unanswered: it runs again once the process holding the memory is replaced (onBatchFailed).
    if (item.error?.code === 'HOST_MEMORY_EXHAUSTED' && this.replaceExhausted(call)) return;
    this.queue.settled(call.tenantId);
    // Its tenant may send another now, in the request slot not in use.
    if (this.requests < this.options.requestsInFlight) this.schedule();
    if (!item.error) return this.finish(call, () => call.resolve(item.result));
    const err = new HostCallError(item.error.code, item.error.message);
    if (item.error.code === 'TENANT_MEMORY_EXCEEDED' || item.error.code === 'HOST_MEMORY_EXHAUSTED') {
      // Its own memory (preparing its runner went over its cap, or it holds the most of an exhausted heap): its offence;
      // its assemblies are unloaded here, which gives the memory back (its calls go to quarantine from now on).
      this.deaths.blame(call.tenantId, item.error.code);
      this.assemblies.forgetTenant(call.tenantId);
      if (item.error.code === 'TENANT_MEMORY_EXCEEDED') this.listener.refused(call.tenantId, call.assemblyId, err);
      return this.finish(call, () => call.reject(err));
    }
    const loading = this.assemblies.get(call.tenantId, call.assemblyId)?.loading;
    if (item.error.code === 'ASSEMBLY_NOT_LOADED' && loading) {
      // Its load failed (e.g. VERIFY_FAILED): that is the error to report. Its answer is read after this line's.
      this.finish(call, () =>
        loading.then(
          () => call.reject(err),
          (e) => call.reject(e),
        ),
      );
    } else this.finish(call, () => call.reject(err));
  }

  private onBatchFailed(host: HostProcess, sent: ExecutorCall[], e: unknown): void {
    if (!(e instanceof HostCallError) || !DEATHS.has(e.failure)) return this.failUnanswered(sent, e);
    const holder = this.memoryCulprit(host, sent, e);
    this.lost(host);
    const culprit = e.position.running && this.exhausted !== host && !holder ? e.position.itemIndex : undefined;
    this.deaths.open();
    if (holder) this.deaths.blame(holder, e.failure);
    sent.forEach((c, i) => {
      if (c.settled) return;
      this.queue.settled(c.tenantId);
      if (i === culprit && c === this.stalls.replacing) {
        this.stalls.replacing = undefined;
        // Replaced for stalling, not failed: it leads its tenant's calls to where the tenant goes now.
        this.deaths.moveApart(c.tenantId);
        this.assemblies.unpin(this.assemblies.get(c.tenantId, c.assemblyId));
        this.deaths.rerun(c);
      } else if (i === culprit) {
        this.deaths.blame(c.tenantId, e.failure, c.stalled);
        this.finish(c, () => c.reject(e));
      } else if (this.assemblies.get(c.tenantId, c.assemblyId)?.killedBy) {
        // Its assembly's load (its static initialisers) killed the host: running it again would only load it again.
        const cause = this.assemblies.get(c.tenantId, c.assemblyId)!.killedBy!;
        this.finish(c, () => c.reject(cause));
      } else if (c.reruns >= MAX_RERUNS) {
        this.finish(c, () => c.reject(e));
      } else {
        c.reruns++;
        this.assemblies.unpin(this.assemblies.get(c.tenantId, c.assemblyId));
        this.deaths.rerun(c);
      }
    });
  }

  /**
   * A call answered HOST_MEMORY_EXHAUSTED: it ran out of memory that, after a full collection, is held
   * by loaded code. Unless its own tenant is the largest holder (then it is its failure), the holder
   * is blamed and the process replaced (the memory goes with it); the call, left unanswered, runs again.
   */
  private replaceExhausted(call: ExecutorCall): boolean {
    const host = this.host;
    const holder = this.assemblies.largestHolder();
    if (!host?.alive || holder?.tenantId === call.tenantId || call.reruns >= MAX_RERUNS) return false;
    if (holder) this.deaths.blame(holder.tenantId, 'HOST_MEMORY_EXHAUSTED');
    this.exhausted = host;
    host.kill('CRASHED', `host replaced: out of memory held by ${holder ? `tenant ${holder.tenantId}'s assemblies` : 'loaded code'}`);
    return true;
  }

  /**
   * The host died or hung running a call while its loaded assemblies were charged at least half its heap:
   * memory is taken for the cause (a heap that full makes the collector thrash until a deadline, or the
   * runtime fail), and the tenant charged the most for the culprit, not the call that happened to run.
   */
  private memoryCulprit(host: HostProcess, sent: ExecutorCall[], e: HostCallError): string | undefined {
    if (!e.position.running || e.position.itemIndex === undefined || this.exhausted === host) return undefined;
    const charges = this.assemblies.chargesOf(host);
    if (sent[e.position.itemIndex] === this.stalls.replacing || !charges || charges.total < this.options.heapBytes / 2) return undefined;
    return charges.holder?.tenantId;
  }

  private failUnanswered(sent: ExecutorCall[], e: unknown): void {
    for (const c of sent) {
      if (c.settled) continue;
      this.queue.settled(c.tenantId);
      this.finish(c, () => c.reject(e));
    }
  }

  /** A call that arrives (or comes back) after close. */
  private refuse(call: ExecutorCall): void {
    call.settled = true;
    this.listener.settled(call);
    call.reject(new HostCallError('UNAVAILABLE', 'runtime is shutting down'));
  }

  private finish(call: ExecutorCall, settle: () => void): void {
    call.settled = true;
    this.assemblies.unpin(this.assemblies.get(call.tenantId, call.assemblyId));
    this.lastUsed = Date.now();
    this.listener.settled(call);
    settle();
  }
}
