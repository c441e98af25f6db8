import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { DomainError } from '../common/domain-error';
import { KeyedMutex } from '../common/keyed-mutex';
import { UploadKind, UploadRecord, UploadRepository } from '../store/upload-repository.port';
import { HostCallError } from './host-process';
import { CompileResult } from './runtime-protocol';

export type CompiledListener = (upload: UploadRecord) => Promise<void> | void;

export interface Compiler {
  compile(files: { path: string; content: string }[], kind?: UploadKind): Promise<CompileResult>;
}

export interface CompileQueueOptions {
  /** Compiles run at once: one per compiler host. */
  concurrency: number;
  /** Uploads of one tenant still to compile; past it an upload is refused (429). */
  maxPendingPerTenant: number;
  /** The compiler's deadline, named in the failure of a compile that outlived it and in Retry-After. */
  deadlineMs: number;
  /** How long dispatching pauses when no compiler can be started or the store cannot record a compile. */
  unavailableRetryMs: number;
}

export const DEFAULT_QUEUE_OPTIONS: CompileQueueOptions = {
  concurrency: 2,
  maxPendingPerTenant: 10,
  deadlineMs: 15_000,
  unavailableRetryMs: 5_000,
};

/** A compile that crashed the compiler or failed inside it (out of memory, killed) is tried once more, then failed. */
const MAX_CRASHES = 2;

/**
 * Uploads answer 202 at once; compiling happens here, in the background. The status lives in the
 * store (pending → compiled | failed), so a restart finishes what was pending instead of forgetting it.
 *
 * Fair across tenants: tenants with pending uploads take turns (round robin: a tenant goes to the back
 * of the ring when its compile ends), each tenant has at most one compile running (so one tenant never
 * holds more than one compiler), and each may have at most `maxPendingPerTenant` uploads waiting.
 * A compile that outlives the deadline is failed, never retried (it would only hold a compiler
 * again); one that crashes the compiler or fails inside it is retried once, on the tenant's next turn.
 *
 * Listeners run after a compile is recorded (auto-binding reducers, activating projections).
 */
export class CompileQueue {
  private readonly logger = new Logger('CompileQueue');
  private readonly listeners: CompiledListener[] = [];
  private readonly crashes = new Map<string, number>();
  private readonly submitting = new KeyedMutex();
  /** Tenants with (possibly) pending uploads, in turn order. */
  private ring: string[] = [];
  /** Tenant → the compile it has running. */
  private readonly running = new Map<string, Promise<void>>();
  private pumping?: Promise<void>;
  private again = false;
  private pauseTimer?: NodeJS.Timeout;
  private idleWaiters: (() => void)[] = [];
  private closed = false;
  private readonly options: CompileQueueOptions;

  constructor(
    private readonly uploads: UploadRepository,
    private readonly compiler: Compiler,
    options: Partial<CompileQueueOptions> = {},
    private readonly now: () => number = Date.now,
  ) {
    this.options = { ...DEFAULT_QUEUE_OPTIONS, ...options };
  }

  onCompiled(listener: CompiledListener): void {
    this.listeners.push(listener);
  }

  /** Refuses (429) when the tenant already has as many uploads waiting as allowed: call before storing anything of an upload. */
  async checkRoom(tenantId: string): Promise<void> {
    const pending = await this.uploads.countPending(tenantId);
    if (pending >= this.options.maxPendingPerTenant) {
      throw new DomainError(
        'TOO_MANY_PENDING_UPLOADS',
        `${pending} uploads are still waiting to compile (at most ${this.options.maxPendingPerTenant}); retry when one has finished`,
        { pending, maxPending: this.options.maxPendingPerTenant, retryAfterSeconds: Math.ceil(this.options.deadlineMs / 1000) },
      );
    }
  }

  async submit(input: {
    tenantId: string;
    kind: UploadKind;
    sources: { path: string; content: string }[];
    meta?: Record<string, unknown>;
    uploadId?: string;
  }): Promise<UploadRecord> {
    const record = {
      uploadId: input.uploadId ?? randomUUID(),
      tenantId: input.tenantId,
      kind: input.kind,
      sources: input.sources,
      meta: input.meta ?? {},
      createdAt: this.now(),
    };
    // Count and insert together, so that concurrent uploads of a tenant cannot pass the cap side by side.
    await this.submitting.run(input.tenantId, async () => {
      await this.checkRoom(input.tenantId);
      await this.uploads.create(record);
    });
    if (!this.ring.includes(input.tenantId)) this.ring.push(input.tenantId);
    this.kick();
    return { ...record, status: 'pending', discovered: null, compilationError: null, assemblySha256: null, compiledAt: null };
  }

  /** Picks up what a previous run left pending. */
  start(): void {
    this.kick();
  }

  /** Resolves when no compile is running and none can be started (tests, shutdown). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops dispatching and waits for the compiles running (each ends by its deadline). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.pauseTimer);
    await this.pumping;
    await Promise.all(this.running.values());
    this.settle();
  }

  private isIdle(): boolean {
    return this.closed || (!this.pumping && this.running.size === 0 && this.pauseTimer === undefined);
  }

  private settle(): void {
    if (!this.isIdle()) return;
    for (const w of this.idleWaiters.splice(0)) w();
  }

  private kick(): void {
    if (this.closed) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = (async () => {
      do {
        this.again = false;
        await this.dispatch().catch((e) => this.logger.error(`cannot read pending uploads: ${e instanceof Error ? e.stack : e}`));
      } while (this.again && !this.closed);
    })().finally(() => {
      this.pumping = undefined;
      this.settle();
    });
  }

  /** Starts compiles while a compiler is free: the next tenant in turn without one running, its oldest upload. */
  private async dispatch(): Promise<void> {
    if (this.pauseTimer) return; // the timer kicks again
    // The store is the queue: merge what it holds (a restart, another instance's uploads) into the ring, keeping its order.
    const pending = await this.uploads.pendingTenants();
    const inStore = new Set(pending);
    const inRing = new Set(this.ring);
    this.ring = this.ring.filter((t) => this.running.has(t) || inStore.has(t));
    for (const t of pending) if (!inRing.has(t)) this.ring.push(t);

    while (!this.closed && this.running.size < this.options.concurrency) {
      const at = this.ring.findIndex((t) => !this.running.has(t));
      if (at < 0) return;
      const tenantId = this.ring[at];
      const upload = await this.uploads.oldestPending(tenantId);
      if (!upload) {
        this.ring = this.ring.filter((t) => t !== tenantId);
        continue;
      }
      const run = this.compileOne(upload)
        .catch((e) => {
          // The store failed to record a result: the upload stays pending for a later turn, after a pause.
          this.logger.error(`cannot record compile of ${upload.uploadId}: ${e instanceof Error ? e.stack : e}`);
          this.pause();
        })
        .finally(() => {
          // Served: to the back of the ring, behind every tenant that waited meanwhile.
          this.ring = [...this.ring.filter((t) => t !== tenantId), tenantId];
          this.running.delete(tenantId);
          this.kick();
          this.settle();
        });
      this.running.set(tenantId, run);
    }
  }

  private async compileOne(upload: UploadRecord): Promise<void> {
    const started = this.now();
    let result: CompileResult;
    try {
      result = await this.compiler.compile(upload.sources, upload.kind);
    } catch (e) {
      const failed = this.failureOf(upload, e, this.now() - started);
      if (!failed) return; // left pending: tried again on a later turn
      result = failed;
    }
    this.crashes.delete(upload.uploadId);
    const at = this.now();
    let done: UploadRecord;
    if (result.ok) {
      const discovered = result.discovered.map((d) => ({ ...d, kind: d.kind }));
      const assembly = Buffer.from(result.assembly, 'base64');
      await this.uploads.markCompiled(upload.tenantId, upload.uploadId, {
        discovered,
        assembly,
        assemblySha256: result.assemblySha256,
        at,
      });
      done = { ...upload, status: 'compiled', discovered, assemblySha256: result.assemblySha256, compiledAt: at };
    } else {
      await this.uploads.markFailed(upload.tenantId, upload.uploadId, { compilationError: result.compilationError, at });
      done = { ...upload, status: 'failed', compilationError: result.compilationError, compiledAt: at };
    }
    for (const l of this.listeners) {
      try {
        await l(done);
      } catch (e) {
        this.logger.error(`listener failed for upload ${upload.uploadId}: ${e instanceof Error ? e.stack : e}`);
      }
    }
  }

  /** What a compile that threw means: a failure to record, or undefined to leave the upload pending. */
  private failureOf(upload: UploadRecord, e: unknown, tookMs: number): CompileResult | undefined {
    const failure = e instanceof HostCallError ? e.failure : 'INTERNAL';
    const why = e instanceof HostCallError ? `${e.failure}: ${e.message}` : String(e);
    const failed = (compilationError: string): CompileResult => ({ ok: false, compilationError, diagnostics: [], warnings: [] });
    // Shutdown killed the compiler: not the archive's fault; the next run compiles it.
    if (this.closed) return undefined;
    if (failure === 'UNAVAILABLE') {
      // No compiler could be started: not the archive's fault. Nothing is counted; dispatching pauses.
      this.logger.error(`no compiler available (${why}); compiles resume in ${this.options.unavailableRetryMs} ms`);
      this.pause();
      return undefined;
    }
    if (failure === 'TIMEOUT') {
      this.logger.warn(`compile of ${upload.uploadId} (tenant ${upload.tenantId}) exceeded the ${this.options.deadlineMs} ms deadline`);
      return failed(
        `compilation exceeded the ${this.options.deadlineMs} ms deadline and was stopped; it is not retried. ` +
          `Code that is very costly to compile (e.g. lambdas nested deep inside calls to overloaded methods, very deep nesting) cannot be accepted.`,
      );
    }
    const crashes = (this.crashes.get(upload.uploadId) ?? 0) + 1;
    this.crashes.set(upload.uploadId, crashes);
    if (crashes < MAX_CRASHES) {
      this.logger.warn(
        `compile of ${upload.uploadId} (tenant ${upload.tenantId}) failed in the compiler after ${tookMs} ms (${why}); it is tried once more`,
      );
      return undefined;
    }
    this.logger.warn(`compile of ${upload.uploadId} (tenant ${upload.tenantId}) failed in the compiler again (${why}); failed`);
    return failed(
      `the compiler failed on this archive ${crashes} times (${why.slice(0, 500)}), e.g. out of memory or stack; it is not retried again`,
    );
  }

  private pause(): void {
    clearTimeout(this.pauseTimer);
    this.pauseTimer = setTimeout(() => {
      this.pauseTimer = undefined;
      this.kick();
      this.settle();
    }, this.options.unavailableRetryMs);
    this.pauseTimer.unref?.();
  }
}
