import { randomUUID } from 'node:crypto';
import * as os from 'node:os';
import { Injectable, Logger } from '@nestjs/common';
import { DomainError } from '../../common/domain-error';
import { KeyedMutex } from '../../common/keyed-mutex';
import { UploadKind, UploadRecord, UploadRepository } from '../../store/upload-repository.port';

export interface CompileQueueOptions {
  /** Compiles run at once: one per compiler host. */
  concurrency: number;
  /** Uploads of one tenant still to compile; past it an upload is refused (429). */
  maxPendingPerTenant: number;
  /** The compiler's deadline, named in the failure of a compile that outlived it and in Retry-After. */
  deadlineMs: number;
  /** How long handing out compiles pauses when no compiler can be started or the store cannot record a compile. */
  unavailableRetryMs: number;
  /**
   * How long a compile claim holds (several instances): past it, an instance that died mid-compile
   * has its upload taken by another. Default: twice the deadline plus 10 s (a compile is stopped at
   * its deadline; the rest is the host's start and the store's write).
   */
  claimMs?: number;
  /**
   * How often the store is looked at for uploads to compile while a compiler is free: uploads
   * another instance accepted and could not compile (it died before claiming, or its claim lapsed).
   */
  sweepMs: number;
  /** Names this instance in its claims (default: host, pid and a random suffix). */
  owner?: string;
}

/**
 * The options a CompileQueue is given, each defaulting to DEFAULT_QUEUE_OPTIONS'. A class, so that Nest
 * injects the service's by type (TenantCodeModule derives them from the compiler pool and the config).
 */
export abstract class CompileQueueSettings implements Partial<CompileQueueOptions> {
  concurrency?: number;
  maxPendingPerTenant?: number;
  deadlineMs?: number;
  unavailableRetryMs?: number;
  claimMs?: number;
  sweepMs?: number;
  owner?: string;
}

export const DEFAULT_QUEUE_OPTIONS: CompileQueueOptions = {
  concurrency: 2,
  maxPendingPerTenant: 10,
  deadlineMs: 15_000,
  unavailableRetryMs: 5_000,
  sweepMs: 5_000,
};

/**
 * Uploads answer 202 at once; they are compiled in the background, in the order this queue hands
 * them out (`take`) to the compile worker (compilation/compile-worker.ts), which compiles each,
 * records the outcome and gives it to its owner, then `release`s the tenant's turn. The status lives
 * in the store (pending → compiled | failed), so a restart finishes what was pending instead of
 * forgetting it: the store is the queue, this class keeps the turns.
 *
 * Fair across tenants: tenants with pending uploads take turns (round robin: a tenant goes to the back
 * of the ring when its compile ends), each tenant has at most one compile running (so one tenant never
 * holds more than one compiler), at most `concurrency` run in all, and each tenant may have at most
 * `maxPendingPerTenant` uploads waiting.
 *
 * Several instances on one store: each upload is compiled by one of them. An upload is handed out
 * only once this instance has claimed it in the store (`claimOldest`: one guarded UPDATE), so the
 * instance that loses a race for it takes the tenant's next upload, or nothing, and says nothing.
 * A claim lapses after `claimMs`: an instance that died mid-compile leaves its upload to another,
 * found by the sweep (every `sweepMs` while a compiler is free here).
 */
@Injectable()
export class CompileQueue {
  private readonly logger = new Logger('CompileQueue');
  private readonly submitting = new KeyedMutex();
  /** Tenants with (possibly) pending uploads, in turn order. */
  private ring: string[] = [];
  /** Tenant → the end of the compile it has running (resolved by `release`). */
  private readonly running = new Map<string, { ended: Promise<void>; end: () => void }>();
  /** The worker's waiting `take` calls. */
  private readonly takers: ((upload: UploadRecord | undefined) => void)[] = [];
  private pumping?: Promise<void>;
  private again = false;
  private pauseTimer?: NodeJS.Timeout;
  private idleWaiters: (() => void)[] = [];
  private stopped = false;
  private sweepTimer?: NodeJS.Timeout;
  private readonly options: CompileQueueOptions;
  /** This instance's name in the uploads it claims. */
  readonly owner: string;
  private readonly claimMs: number;
  private readonly now: () => number = Date.now;

  constructor(
    private readonly uploads: UploadRepository,
    options: CompileQueueSettings = {},
  ) {
    this.options = { ...DEFAULT_QUEUE_OPTIONS, ...options };
    this.owner = this.options.owner ?? `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.claimMs = this.options.claimMs ?? 2 * this.options.deadlineMs + 10_000;
  }

  /** The compiler's deadline (the worker names it in the failure of a compile that outlived it). */
  get deadlineMs(): number {
    return this.options.deadlineMs;
  }

  /** How long a `pause` lasts. */
  get retryMs(): number {
    return this.options.unavailableRetryMs;
  }

  /** Closed for shutdown: a compile killed now is not the archive's fault. */
  get closed(): boolean {
    return this.stopped;
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

  /**
   * The next upload to compile: the next tenant in turn with no compile running, its oldest pending
   * upload no other instance has claimed (now claimed by this one), once a compiler is free. Waits
   * until there is one; undefined once the queue is closed.
   * The first call picks up what a previous run left pending. The caller compiles it, then `release`s it.
   */
  take(): Promise<UploadRecord | undefined> {
    if (this.stopped) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.takers.push(resolve);
      this.kick();
    });
  }

  /** The tenant's compile has ended (recorded, or left pending): its turn goes to the back of the ring. */
  release(upload: UploadRecord): void {
    const tenantId = upload.tenantId;
    // Served: to the back of the ring, behind every tenant that waited meanwhile.
    this.ring = [...this.ring.filter((t) => t !== tenantId), tenantId];
    this.running.get(tenantId)?.end();
    this.running.delete(tenantId);
    this.kick();
    this.settle();
  }

  /** Hands out nothing for `unavailableRetryMs` (no compiler could be started, or the store could not record a compile). */
  pause(): void {
    clearTimeout(this.pauseTimer);
    this.pauseTimer = setTimeout(() => {
      this.pauseTimer = undefined;
      this.kick();
      this.settle();
    }, this.options.unavailableRetryMs);
    this.pauseTimer.unref?.();
  }

  /** Resolves when no compile is running and none can be started (tests, shutdown). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops handing out compiles (waiting takers get undefined) and waits for the compiles running (each ends by its deadline). */
  async close(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.pauseTimer);
    clearTimeout(this.sweepTimer);
    for (const t of this.takers.splice(0)) t(undefined);
    await this.pumping;
    await Promise.all([...this.running.values()].map((r) => r.ended));
    this.settle();
  }

  private isIdle(): boolean {
    return this.stopped || (!this.pumping && this.running.size === 0 && this.pauseTimer === undefined);
  }

  private settle(): void {
    if (!this.isIdle()) return;
    for (const w of this.idleWaiters.splice(0)) w();
  }

  private kick(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = (async () => {
      do {
        this.again = false;
        await this.dispatch().catch((e) => this.logger.error(`cannot read pending uploads: ${e instanceof Error ? e.stack : e}`));
      } while (this.again && !this.stopped);
    })().finally(() => {
      this.pumping = undefined;
      this.armSweep();
      this.settle();
    });
  }

  /** While a compiler is free here, the store is looked at again later (see `sweepMs`); nothing runs while all are busy. */
  private armSweep(): void {
    if (this.stopped || this.sweepTimer || this.takers.length === 0) return;
    this.sweepTimer = setTimeout(() => {
      this.sweepTimer = undefined;
      this.kick();
    }, this.options.sweepMs);
    this.sweepTimer.unref?.();
  }

  /** Hands out uploads while a compiler is free and the worker waits: the next tenant in turn without one running, its oldest upload. */
  private async dispatch(): Promise<void> {
    if (this.pauseTimer || this.takers.length === 0) return; // the timer, or the next take, kicks again
    // The store is the queue: merge what it holds (a restart, another instance's uploads) into the ring, keeping its order.
    const pending = await this.uploads.pendingTenants(this.now());
    const inStore = new Set(pending);
    const inRing = new Set(this.ring);
    this.ring = this.ring.filter((t) => this.running.has(t) || inStore.has(t));
    for (const t of pending) if (!inRing.has(t)) this.ring.push(t);

    while (!this.stopped && this.running.size < this.options.concurrency && this.takers.length > 0) {
      const at = this.ring.findIndex((t) => !this.running.has(t));
      if (at < 0) return;
      const tenantId = this.ring[at];
      const now = this.now();
      const upload = await this.uploads.claimOldest(tenantId, this.owner, now, now + this.claimMs);
      if (!upload) {
        // Nothing left to claim: compiled, or claimed by another instance meanwhile.
        this.ring = this.ring.filter((t) => t !== tenantId);
        continue;
      }
      if (this.stopped) {
        // Closed while claiming: given up at once, so another instance need not wait for it to lapse.
        await this.uploads.releaseClaim(tenantId, upload.uploadId, this.owner);
        return;
      }
      let end!: () => void;
      const ended = new Promise<void>((r) => (end = r));
      this.running.set(tenantId, { ended, end });
      this.takers.shift()!(upload);
    }
  }
}
