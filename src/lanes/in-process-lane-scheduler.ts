import { Logger } from '@nestjs/common';
import { FairLaneQueue } from './fair-lane-queue';
import { LaneHandler, LaneRef, LaneRunOutcome, LaneRunResult, LaneScheduler, LaneSchedulerStats } from './lane-scheduler.port';

export interface InProcessLaneSchedulerOptions {
  /** Handlers running at once, across all lanes. */
  concurrency: number;
  /** Handlers of one tenant running at once (default: the concurrency, i.e. no cap beyond it). */
  maxInFlightPerTenant: number;
}

/** What a handler that throws gets: the same as a `retry` after this long. */
export const THROWN_HANDLER_RETRY_MS = 1000;

const OUTCOMES = new Set<string>(['idle', 'more', 'retry', 'held']);

/**
 * Lane runs started in one go: each begins with a store read on the event loop, so starting 64 at
 * once would hold an HTTP request behind all of them; the rest start after the loop has polled I/O.
 */
const STARTS_PER_TURN = 4;

/**
 * A lane with something pending. A lane with nothing pending has no entry at all, so memory
 * follows the lanes in flight, not every lane ever woken.
 *  - queued: in the fair queue, waiting for a free slot and its tenant's turn;
 *  - running: its handler runs; `dirty` when woken meanwhile (it must run once more);
 *  - backoff: waiting for a retry timer (a wake cuts it short).
 */
interface LaneEntry {
  lane: LaneRef;
  phase: 'queued' | 'running' | 'backoff';
  dirty: boolean;
  timer?: NodeJS.Timeout;
}

/** The lane as one string: unambiguous while tenant and version ids hold no NUL (the key, last, may hold anything). */
export function laneId(lane: LaneRef): string {
  return `${lane.tenantId}\0${lane.versionId}\0${lane.key}`;
}

/** Runs one handler call; a throw, or an answer that is not an outcome, becomes a retry after 1 s. */
export async function runLaneHandler(handler: LaneHandler, lane: LaneRef, logger: Logger): Promise<LaneRunResult> {
  try {
    const outcome = await handler.run(lane);
    if (!OUTCOMES.has(outcome?.status)) throw new Error(`lane handler returned ${JSON.stringify(outcome)}, not an outcome`);
    return outcome;
  } catch (e) {
    logger.error(`lane handler failed for ${JSON.stringify(lane)}; retrying in ${THROWN_HANDLER_RETRY_MS} ms: ${(e as Error)?.stack ?? e}`);
    return { status: 'retry', afterMs: THROWN_HANDLER_RETRY_MS };
  }
}

/**
 * The scheduler of a single service instance: nothing survives a restart, which costs only latency
 * (the runtime sweeps the store). Queued lanes wait in a FairLaneQueue: tenants take turns for free
 * slots, and a tenant never has more than `maxInFlightPerTenant` handlers running.
 */
export class InProcessLaneScheduler implements LaneScheduler {
  readonly kind = 'in-process' as const;
  private readonly logger = new Logger('InProcessLaneScheduler');
  private readonly concurrency: number;
  private readonly entries = new Map<string, LaneEntry>();
  /** Entries per version (tenant and version id): what `pendingOf` answers. */
  private readonly perVersion = new Map<string, number>();
  private readonly queue: FairLaneQueue;
  private started = false;
  private running = 0;
  private closed = false;
  /** A pump is due after the event loop's next I/O poll (setImmediate). */
  private pumpDue = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    /** What runs each lane it hands out (LaneRunner). */
    private readonly handler: LaneHandler,
    options: Partial<InProcessLaneSchedulerOptions> = {},
  ) {
    this.concurrency = options.concurrency ?? 8;
    if (!(this.concurrency >= 1)) throw new Error(`concurrency must be at least 1, got ${this.concurrency}`);
    this.queue = new FairLaneQueue(options.maxInFlightPerTenant ?? this.concurrency);
  }

  async wake(lane: LaneRef): Promise<void> {
    this.mark(lane);
    this.pump();
  }

  async wakeMany(lanes: LaneRef[]): Promise<void> {
    for (const lane of lanes) this.mark(lane);
    this.pump();
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('lane scheduler already started');
    if (this.closed) throw new Error('lane scheduler is closed');
    this.started = true;
    this.pump();
  }

  pendingOf(tenantId: string, versionId: string): number {
    return this.perVersion.get(`${tenantId}\0${versionId}`) ?? 0;
  }

  private count(lane: LaneRef, by: 1 | -1): void {
    const k = `${lane.tenantId}\0${lane.versionId}`;
    const n = (this.perVersion.get(k) ?? 0) + by;
    if (n > 0) this.perVersion.set(k, n);
    else this.perVersion.delete(k);
  }

  private forget(id: string, entry: LaneEntry): void {
    this.entries.delete(id);
    this.count(entry.lane, -1);
  }

  async stats(): Promise<LaneSchedulerStats> {
    // Every entry that is not running is queued or waiting out a retry delay.
    return { queued: this.entries.size - this.running, running: this.running };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const [id, entry] of this.entries) {
      if (entry.phase === 'running') continue;
      clearTimeout(entry.timer);
      this.queue.delete(id);
      this.forget(id, entry);
    }
    if (this.running > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private mark(lane: LaneRef): void {
    if (this.closed) return;
    const id = laneId(lane);
    const entry = this.entries.get(id);
    if (!entry) {
      const fresh: LaneEntry = {
        lane: { tenantId: lane.tenantId, versionId: lane.versionId, key: lane.key },
        phase: 'queued',
        dirty: false,
      };
      this.entries.set(id, fresh);
      this.count(fresh.lane, 1);
      this.queue.push(id, fresh.lane);
    } else if (entry.phase === 'running') {
      entry.dirty = true;
    } else if (entry.phase === 'backoff') {
      // A wake means new work may be there: do not make it wait out the failure's backoff.
      clearTimeout(entry.timer);
      this.enqueue(id, entry);
    }
    // queued: already going to run, and that run starts after this wake.
  }

  private enqueue(id: string, entry: LaneEntry): void {
    entry.phase = 'queued';
    entry.dirty = false;
    entry.timer = undefined;
    this.queue.push(id, entry.lane);
  }

  private pump(): void {
    if (!this.started) return;
    for (let started = 0; !this.closed && this.running < this.concurrency; started++) {
      if (started === STARTS_PER_TURN) {
        if (!this.pumpDue) {
          this.pumpDue = true;
          setImmediate(() => {
            this.pumpDue = false;
            this.pump();
          });
        }
        return;
      }
      const next = this.queue.take();
      if (!next) return; // nothing queued, or every tenant with a lane queued is at its cap
      const id = next.id;
      const entry = this.entries.get(id)!;
      entry.phase = 'running';
      entry.dirty = false;
      this.running++;
      void this.run(id, entry);
    }
  }

  private async run(id: string, entry: LaneEntry): Promise<void> {
    const outcome = await runLaneHandler(this.handler, entry.lane, this.logger);
    if (outcome.wake) void this.wakeMany(outcome.wake);
    this.running--;
    this.queue.release(entry.lane.tenantId);
    this.settle(id, entry, outcome);
    this.pump();
    if (this.running === 0) this.idleWaiters.splice(0).forEach((resolve) => resolve());
  }

  private settle(id: string, entry: LaneEntry, outcome: LaneRunOutcome): void {
    if (this.closed) {
      this.forget(id, entry);
      return;
    }
    switch (outcome.status) {
      case 'more':
        this.enqueue(id, entry); // at the back of its tenant's queue: other lanes get a turn first
        return;
      case 'retry':
        // The backoff wins over a wake that came during the run: that wake most likely announced an
        // event behind the failing one, and running now would only fail again and use up an attempt.
        // A wake that comes after the run (during the delay) does cut the delay short.
        entry.phase = 'backoff';
        entry.dirty = false;
        entry.timer = setTimeout(
          () => {
            this.enqueue(id, entry);
            this.pump();
          },
          Math.max(0, outcome.afterMs),
        );
        return;
      case 'held':
      case 'idle':
        if (entry.dirty) this.enqueue(id, entry);
        else this.forget(id, entry);
        return;
    }
  }
}
