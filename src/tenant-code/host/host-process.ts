import { stringifyJson } from '../../common/raw-json';
import { ChildProcess, spawn } from 'node:child_process';
import { HostErrorCode, HostMode, HostRequests, HostRequestType } from './runtime-protocol';

/** Why a call to a host did not return a result. */
export type HostFailure =
  | 'TIMEOUT' // the call outlived its deadline; the host was killed
  | 'CRASHED' // the host died (or was killed for another call) while this call was in flight
  | 'PROTOCOL' // the host wrote something that is not the protocol (oversized, not JSON)
  | 'UNAVAILABLE' // the host could not be started
  | HostErrorCode; // the host answered with an error envelope

/** Where the host was in a call when it died (only known for the call it was running). */
export interface HostCallPosition {
  /** The host was running this call when it died or hung (the oldest unanswered one; it answers in order). */
  running: boolean;
  /** For a batch: the item it was running (the first whose line had not arrived). */
  itemIndex?: number;
}

export class HostCallError extends Error {
  constructor(
    readonly failure: HostFailure,
    message: string,
    readonly position: HostCallPosition = { running: false },
  ) {
    super(message);
    this.name = 'HostCallError';
  }
}

/** A batch item's line (runtime/protocol.json events.item): its result, or why it alone failed. */
export interface HostItem<R> {
  index: number;
  result?: R;
  error?: { code: HostErrorCode; message: string };
}

/** A batch item the host has been running past the stall threshold (see HostProcess.watchStalls). */
export interface HostStall {
  /** What the caller passed with the batch (callItems' `tag`). */
  tag: unknown;
  itemIndex: number;
  /** How long it had been running. */
  ms: number;
}

export interface HostLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Strict sandbox: a host whose ready line does not report its seccomp filter is killed, not used. */
  requireSeccomp?: boolean;
}

/** The host's ready line (runtime/protocol.json events.ready). */
export interface HostReady {
  pid: number;
  mode: HostMode;
  protocolVersion: number;
  seccomp: boolean;
  [k: string]: unknown;
}

export interface HostProcessOptions {
  mode: HostMode;
  launch: HostLaunch;
  readyTimeoutMs: number;
  /** What the host may write on one line; past it the host is treated as hostile and killed. */
  maxLineBytes: number;
  label: string;
}

/** Requests the host acknowledges as it begins them (runtime/protocol.json events.started). */
const ACKNOWLEDGED: ReadonlySet<string> = new Set(['batch', 'load']);

interface Pending {
  type: string;
  /** The host said it began it (acknowledged types only). */
  started?: boolean;
  resolve: (v: any) => void;
  reject: (e: HostCallError) => void;
  /** The call's deadline (a batch: each item's, in order; the last one also covers the result line). */
  deadlinesMs: number[];
  /** Batches: items answered so far, and where each item line goes. */
  itemsDone: number;
  onItem?: (item: HostItem<any>) => void;
  /** The caller's own handle on a batch, given back with a stall. */
  tag?: unknown;
}

const STDERR_TAIL = 8 * 1024;

/**
 * One runtime host child process: JSON lines over stdio with request ids, several calls in
 * flight. A deadline is enforced from outside: when it passes, the process is killed (tenant code
 * cannot be interrupted from inside), that call fails with TIMEOUT and the others with CRASHED.
 *
 * The host answers one request at a time, in order, and a batch item by item; so the clock of a
 * call (or of a batch's item) starts only when the one before it has been answered: a call
 * waiting behind a slow one is not charged for it, and when the host dies, the call (and item) it
 * was running is known exactly (HostCallError.position) — which is how a shared executor tells
 * the tenant that killed it from the innocent ones whose calls were merely queued. Batches and
 * loads are acknowledged as they begin: one the host died (or hung) before beginning was not
 * running, whoever sent it.
 */
export class HostProcess {
  private readonly pending = new Map<number, Pending>();
  /** The deadline of the oldest unanswered call (or its current item): the one the host is running. */
  private headTimer?: NodeJS.Timeout;
  /** Fires when the batch item the host is running has run `stall.ms` (shorter than its deadline). */
  private stallTimer?: NodeJS.Timeout;
  private stall?: { ms: number; onStall: (stall: HostStall) => void };
  /** A call past its deadline took the blame: nothing else in flight was running when the host was killed. */
  private blamed = false;
  private nextId = 1;
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private stderrTail = '';
  private dead = false;
  private deathReason: { failure: HostFailure; message: string } = { failure: 'CRASHED', message: 'host exited' };
  private readonly exited: Promise<number | null>;
  readonly startedAt = Date.now();
  ready?: HostReady;

  private constructor(
    private readonly child: ChildProcess,
    private readonly options: HostProcessOptions,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  static async start(options: HostProcessOptions): Promise<HostProcess> {
    const child = spawn(options.launch.command, options.launch.args, {
      env: options.launch.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const host = new HostProcess(child, options);
    await host.awaitReady();
    return host;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return !this.dead;
  }

  get inFlight(): number {
    return this.pending.size;
  }

  /** The last lines the host wrote on stderr: shown when it dies. */
  get diagnostics(): string {
    return this.stderrTail;
  }

  call<T extends HostRequestType>(type: T, payload: HostRequests[T][0], deadlineMs: number): Promise<HostRequests[T][1]> {
    return this.send(type, payload, [deadlineMs]);
  }

  /**
   * A batch: `onItem` gets each item's line as it arrives (in order); the promise settles with the
   * batch's own result line. `deadlinesMs[i]` is item i's deadline, counted from the moment item
   * i-1 was answered (or the batch reached the head of the line).
   */
  callItems<T extends HostRequestType>(
    type: T,
    payload: HostRequests[T][0],
    deadlinesMs: number[],
    onItem: (item: HostItem<any>) => void,
    tag?: unknown,
  ): Promise<HostRequests[T][1]> {
    return this.send(type, payload, deadlinesMs.length ? deadlinesMs : [1000], onItem, tag);
  }

  /**
   * `onStall` hears of every batch item the host has been running for `ms` without answering it
   * (once per item; only an item the host said it began). Nothing is killed: the caller decides —
   * a shared executor moves the calls waiting behind it elsewhere long before the item's deadline.
   */
  watchStalls(ms: number, onStall: (stall: HostStall) => void): void {
    this.stall = { ms, onStall };
    this.armHead();
  }

  private send(type: string, payload: unknown, deadlinesMs: number[], onItem?: (item: HostItem<any>) => void, tag?: unknown): Promise<any> {
    if (this.dead) return Promise.reject(new HostCallError('CRASHED', `${this.options.label}: host is not running`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { type, resolve, reject, deadlinesMs, itemsDone: 0, onItem, tag });
      this.child.stdin!.write(stringifyJson({ id, type, payload }) + '\n');
      if (this.head()?.[0] === id) this.armHead();
    });
  }

  /** (Re)starts the clock of whatever the host is running now: the oldest call, at its current item. */
  private armHead(): void {
    if (this.headTimer) clearTimeout(this.headTimer);
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.headTimer = this.stallTimer = undefined;
    const head = this.head();
    if (!head || this.dead) return;
    const [id, entry] = head;
    // A request the host acknowledges is charged from its `started` line: before it, only the host's
    // own code runs (reading, parsing), and a host at nice 19 on a busy machine may take long to
    // get there — that is not the tenant's call hanging. It still gets a bound (the start timeout).
    const begun = !ACKNOWLEDGED.has(entry.type) || entry.started;
    const deadline = entry.deadlinesMs[Math.min(entry.itemsDone, entry.deadlinesMs.length - 1)];
    const ms = begun ? deadline : Math.max(deadline, this.options.readyTimeoutMs);
    const stall = this.stall;
    if (stall && begun && entry.onItem && stall.ms < ms) {
      const item = entry.itemsDone;
      this.stallTimer = setTimeout(() => {
        this.stallTimer = undefined;
        // Still that item, and the host said it began the batch: it is what the host is running.
        if (this.dead || this.pending.get(id) !== entry || entry.itemsDone !== item || !entry.started) return;
        stall.onStall({ tag: entry.tag, itemIndex: item, ms: stall.ms });
      }, stall.ms);
    }
    this.headTimer = setTimeout(() => {
      this.headTimer = undefined;
      if (this.pending.get(id) !== entry) return;
      this.pending.delete(id);
      const what = entry.onItem ? `${entry.type} item ${entry.itemsDone}` : entry.type;
      entry.reject(new HostCallError('TIMEOUT', `${this.options.label}: ${what} exceeded its ${ms} ms deadline`, this.position(entry)));
      this.blamed = true;
      this.kill('CRASHED', `host killed: another call (${entry.type}) exceeded its deadline`);
    }, ms);
  }

  /** Where the host was in this call, the oldest unanswered (it had begun it, unless it was to say so and did not). */
  private position(entry: Pending): HostCallPosition {
    if (ACKNOWLEDGED.has(entry.type) && !entry.started) return { running: false };
    return { running: true, ...(entry.onItem ? { itemIndex: entry.itemsDone } : {}) };
  }

  private head(): [number, Pending] | undefined {
    for (const e of this.pending) if (e[0] !== 0) return e;
    return undefined;
  }

  /** Kills the process now; every call in flight fails with `failure`. */
  kill(failure: HostFailure = 'CRASHED', message = 'host killed'): void {
    if (!this.dead) this.deathReason = { failure, message };
    this.markDead();
    this.child.kill('SIGKILL');
  }

  /** Closes stdin (the host exits on EOF), waits, then kills what is left. */
  async close(graceMs = 2000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.stdin!.end();
    const timer = setTimeout(() => this.kill('CRASHED', 'host stopped'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  onExit(listener: () => void): void {
    void this.exited.then(listener);
  }

  private awaitReady(): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.kill('UNAVAILABLE', 'host did not become ready');
        reject(
          new HostCallError(
            'UNAVAILABLE',
            `${this.options.label}: no ready message within ${this.options.readyTimeoutMs} ms\n${this.stderrTail}`,
          ),
        );
      }, this.options.readyTimeoutMs);
      this.pending.set(0, {
        type: 'ready',
        deadlinesMs: [],
        itemsDone: 0,
        resolve: (payload: HostReady) => {
          clearTimeout(timer);
          if (payload?.mode !== this.options.mode) {
            this.kill('PROTOCOL', 'wrong mode');
            reject(
              new HostCallError('PROTOCOL', `${this.options.label}: host started in mode ${payload?.mode}, wanted ${this.options.mode}`),
            );
          } else if (this.options.launch.requireSeccomp && payload.seccomp !== true) {
            this.kill('UNAVAILABLE', 'no seccomp filter');
            reject(
              new HostCallError(
                'UNAVAILABLE',
                `${this.options.label}: host did not install its seccomp filter (required by RUNTIME_SANDBOX=strict)`,
              ),
            );
          } else {
            this.ready = payload;
            resolve();
          }
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(new HostCallError('UNAVAILABLE', `${this.options.label}: host failed to start: ${e.message}\n${this.stderrTail}`));
        },
      });
      this.child.on('error', (e) => this.kill('UNAVAILABLE', `cannot start host: ${e.message}`));
      this.child.stdout!.on('data', (chunk: Buffer) => this.onStdout(chunk));
      this.child.stderr!.on('data', (chunk: Buffer) => {
        this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL);
      });
      this.child.stdin!.on('error', () => undefined); // EPIPE after death surfaces as exit
      this.child.once('exit', (code, signal) => {
        if (!this.dead) this.deathReason = { failure: 'CRASHED', message: `host exited (code ${code}, signal ${signal})` };
        this.markDead();
      });
    });
  }

  private onStdout(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      const part = chunk.subarray(start, nl);
      const line = this.bufferedBytes ? Buffer.concat([...this.buffered, part]).toString('utf8') : part.toString('utf8');
      this.buffered = [];
      this.bufferedBytes = 0;
      start = nl + 1;
      this.onLine(line);
      if (this.dead) return;
    }
    if (start < chunk.length) {
      this.buffered.push(chunk.subarray(start));
      this.bufferedBytes += chunk.length - start;
      if (this.bufferedBytes > this.options.maxLineBytes) {
        this.kill('PROTOCOL', `host wrote a line over ${this.options.maxLineBytes} bytes`);
      }
    }
  }

  private onLine(line: string): void {
    if (line.length > this.options.maxLineBytes) return this.kill('PROTOCOL', `host wrote a line over ${this.options.maxLineBytes} bytes`);
    let msg: { id?: unknown; type?: unknown; payload?: any };
    try {
      msg = JSON.parse(line);
    } catch {
      return this.kill('PROTOCOL', 'host wrote a line that is not JSON');
    }
    const entry = typeof msg.id === 'number' ? this.pending.get(msg.id) : undefined;
    if (!entry) return; // late answer to a call that already timed out
    if (msg.type === 'started') {
      entry.started = true;
      if (this.head()?.[1] === entry) this.armHead();
      return;
    }
    if (msg.type === 'item') {
      if (!entry.onItem || msg.payload?.index !== entry.itemsDone) return this.kill('PROTOCOL', 'host wrote an item line out of turn');
      entry.itemsDone++;
      this.armHead();
      try {
        entry.onItem(msg.payload);
      } catch {
        /* a listener's fault must not break the stream */
      }
      return;
    }
    this.pending.delete(msg.id as number);
    if (msg.id !== 0) this.armHead();
    if (msg.type === 'result' || msg.type === 'ready') entry.resolve(msg.payload);
    else if (msg.type === 'error') {
      const code = (msg.payload?.code ?? 'INTERNAL') as HostErrorCode;
      entry.reject(new HostCallError(code, String(msg.payload?.message ?? 'host error').slice(0, 4000)));
    } else this.kill('PROTOCOL', `host wrote an unknown envelope type`);
  }

  private markDead(): void {
    if (this.dead) return;
    this.dead = true;
    if (this.headTimer) clearTimeout(this.headTimer);
    if (this.stallTimer) clearTimeout(this.stallTimer);
    const { failure, message } = this.deathReason;
    // Unless a call past its deadline took the blame, the oldest one is what the host was running.
    const running = this.blamed ? undefined : this.head()?.[0];
    for (const [id, entry] of this.pending) {
      this.pending.delete(id);
      const position = id === running ? this.position(entry) : { running: false };
      entry.reject(new HostCallError(failure, `${this.options.label}: ${message}`, position));
    }
  }
}
