import type { Queue } from 'bullmq';

/**
 * The lane inbox port. A lane is one state key of one projection version; its events and its
 * checkpoint live in the store (the truth). The scheduler only decides WHEN a lane's handler runs:
 * it is a wake-up service with retries and backoff. Losing its queue (a Redis FLUSHALL, a restart)
 * costs latency, never an event: the lane runtime sweeps the store for lanes with work and wakes them.
 *
 * Fair shares: lanes of different tenants are served in turn, and one tenant has at most its
 * adapter's `maxInFlightPerTenant` lanes in flight, so a tenant with 100,000 lanes woken waits its
 * turns like a tenant with one (the conformance suite holds every adapter to it).
 */
export interface LaneRef {
  tenantId: string;
  /** The projection version (its uploadId). */
  versionId: string;
  key: string;
}

export type LaneRunOutcome =
  /** Nothing left to do for now. */
  | { status: 'idle' }
  /** Did a bounded amount of work and more is waiting: run again soon (gives other lanes a turn). */
  | { status: 'more' }
  /**
   * A failure to retry after a delay (backoff decided by the handler, which counts attempts in the store).
   * A wake that came during the failed run waits out the delay too (running at once would most
   * likely fail again and use up an attempt); a wake during the delay cuts it short.
   */
  | { status: 'retry'; afterMs: number }
  /** Held on a failing event until an operator acts: do not run again until woken. */
  | { status: 'held' };

export type LaneHandler = (lane: LaneRef) => Promise<LaneRunOutcome>;

export interface LaneSchedulerStats {
  /** Lanes waiting to run (woken, or due after a retry delay). */
  queued: number;
  running: number;
}

export interface LaneScheduler {
  readonly kind: 'in-process' | 'bullmq';
  /**
   * After this resolves, the lane's handler will run at least once more, starting after this call
   * (a wake while the lane runs makes it run again afterwards). Idempotent while it is queued.
   * May reject when the scheduler's backing store (Redis) is unreachable: the store sweep wakes
   * the lane later.
   */
  wake(lane: LaneRef): Promise<void>;
  wakeMany(lanes: LaneRef[]): Promise<void>;
  /** Begins running handlers; one lane never runs twice at once in this process. */
  start(handler: LaneHandler): Promise<void>;
  /** This process's lanes (in-process), or the whole shared queue across instances (BullMQ). */
  stats(): Promise<LaneSchedulerStats>;
  /** Stops taking work and waits for running handlers. */
  close(): Promise<void>;
  /**
   * This process's lanes of a version that are queued, running or waiting out a retry (in-process;
   * absent where the queue is shared). The sweep skips a busy version's read for lanes with work.
   */
  pendingOf?(tenantId: string, versionId: string): number;
  /** The shared queue an operators' Bull Board shows (BullMQ); absent where there is none (in-process). */
  boardAdapter?(): Queue;
}
