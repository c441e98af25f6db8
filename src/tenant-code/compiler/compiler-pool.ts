import { HostProcess } from '../host/host-process';
import { CompileResult } from '../host/runtime-protocol';

interface CompilerSlot {
  host?: Promise<HostProcess>;
  busy: boolean;
}

/**
 * A few shared compiler hosts (compiling runs no tenant code, so warm Roslyns serve every tenant),
 * each compiling one archive at a time. A compiler that dies or fails a compile is replaced at once,
 * so that it is warm again when needed.
 */
export class CompilerPool {
  private readonly slots: CompilerSlot[];
  private readonly waiting: ((slot: CompilerSlot) => void)[] = [];
  private closed = false;

  constructor(
    count: number,
    private readonly spawn: () => Promise<HostProcess>,
    readonly deadlineMs: number,
  ) {
    this.slots = Array.from({ length: Math.max(1, count) }, () => ({ busy: false }));
  }

  get size(): number {
    return this.slots.length;
  }

  /** Starts every compiler host now, so that each has warmed Roslyn before the first upload. */
  start(): void {
    for (const slot of this.slots) this.warm(slot);
  }

  /**
   * Compiles on a free compiler host (waiting for one if all are busy) under the compile deadline:
   * past it, that host is killed (TIMEOUT). A host that dies during a compile fails it with
   * CRASHED; one that answers with an error (e.g. out of memory) is stopped too, as it may hold on
   * to what the compile took. Either way a replacement starts at once and warms up.
   */
  async compile(files: { path: string; content: string }[], kind?: 'reducer' | 'projection'): Promise<CompileResult> {
    const slot = await this.free();
    let host: HostProcess | undefined;
    try {
      host = await (slot.host = alive(slot.host, this.spawn));
      return await host.call('compile', { files, kind }, this.deadlineMs);
    } catch (e) {
      host?.kill('CRASHED', 'compiler stopped after a failed compile');
      throw e;
    } finally {
      if (host && !host.alive) this.warm(slot);
      this.release(slot);
    }
  }

  /**
   * Readiness: compiler processes running now. A slot whose process died while idle (it is
   * otherwise replaced on its next compile) is restarted here, so that an instance that no upload
   * reaches does not stay unready; one still starting counts as not running yet.
   */
  async running(): Promise<number> {
    const states = await Promise.all(this.slots.map((slot) => settledHost(slot.host)));
    this.slots.forEach((slot, i) => {
      if (!slot.busy && states[i] !== 'starting' && !states[i]?.alive) this.warm(slot);
    });
    return states.filter((h) => h !== 'starting' && h?.alive).length;
  }

  async pids(): Promise<(number | undefined)[]> {
    return Promise.all(this.slots.map(async (c) => (await c.host?.catch(() => undefined))?.pid));
  }

  async close(): Promise<void> {
    this.closed = true;
    const hosts = this.slots.map((c) => c.host);
    for (const c of this.slots) c.host = undefined;
    await Promise.all(hosts.map(async (h) => (await h?.catch(() => undefined))?.close()));
  }

  private free(): Promise<CompilerSlot> {
    const free = this.slots.find((c) => !c.busy);
    if (free) {
      free.busy = true;
      return Promise.resolve(free);
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(slot: CompilerSlot): void {
    const next = this.waiting.shift();
    if (next) next(slot);
    else slot.busy = false;
  }

  /** (Re)starts a slot's host in the background; a failed start is retried on the slot's next compile. */
  private warm(slot: CompilerSlot): void {
    if (this.closed) return;
    const host = (slot.host = alive(slot.host, this.spawn));
    host.catch(() => undefined);
  }
}

/** A slot's host if its start has settled (undefined if it failed or never began), else 'starting'. */
function settledHost(host: Promise<HostProcess> | undefined): Promise<HostProcess | undefined | 'starting'> {
  if (!host) return Promise.resolve(undefined);
  return Promise.race([host.catch(() => undefined), new Promise<'starting'>((r) => setImmediate(() => r('starting')))]);
}

/**
 * The current host if it is alive, else a new one: a dead host is replaced on next use. The
 * promise is chained (not awaited then replaced) so that concurrent callers share one restart.
 */
function alive(current: Promise<HostProcess> | undefined, spawn: () => Promise<HostProcess>): Promise<HostProcess> {
  return (current ?? Promise.reject(new Error('not started'))).then((h) => (h.alive ? h : spawn()), spawn);
}
