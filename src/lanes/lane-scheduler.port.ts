import type { Queue } from 'bullmq';
import type { LaneRunner } from './lane-runner';
import { LaneRef } from './lane-ref';

export type { LaneRef, LaneRunOutcome, LaneRunResult } from './lane-ref';

/**
 * What a scheduler runs for each lane it hands out, given at its construction: the LaneRunner
 * (typed by it, so that "go to definition" from the scheduler's call lands on LaneRunner.run; tests
 * give any object with a `run`). A throw, or an answer that is not an outcome, is a retry after 1 s.
 */
export type LaneHandler = Pick<LaneRunner, 'run'>;

export interface LaneSchedulerStats {
  /** Lanes waiting to run (woken, or due after a retry delay). */
  queued: number;
  running: number;
}

/**
 * The lane scheduler port (adapters: InProcessLaneScheduler, BullmqLaneScheduler; the choice is
 * LanesModule's, by REDIS_URL). A lane is one state key of one projection version; its events and its
 * checkpoint live in the store (the truth). The scheduler only decides WHEN a lane's handler runs:
 * it is a wake-up service with retries and backoff. Losing its queue (a Redis FLUSHALL, a restart)
 * costs latency, never an event: the lane runtime sweeps the store for lanes with work and wakes them.
 * Callers: TenantRouter (wakeMany after routing), LaneEngine (the sweep, an operator's wake, start and close).
 *
 * Fair shares: lanes of different tenants are served in turn, and one tenant has at most its
 * adapter's `maxInFlightPerTenant` lanes in flight, so a tenant with 100,000 lanes woken waits its
 * turns like a tenant with one (the conformance suite holds every adapter to it).
 */
export abstract class LaneScheduler {
  abstract readonly kind: 'in-process' | 'bullmq';
  /**
   * After this resolves, the lane's handler will run at least once more, starting after this call
   * (a wake while the lane runs makes it run again afterwards). Idempotent while it is queued.
   * May reject when the scheduler's backing store (Redis) is unreachable: the store sweep wakes
   * the lane later.
   */
  abstract wake(lane: LaneRef): Promise<void>;
  abstract wakeMany(lanes: LaneRef[]): Promise<void>;
  /** Begins running its handler (given at construction); one lane never runs twice at once in this process. */
  abstract start(): Promise<void>;
  /** This process's lanes (in-process), or the whole shared queue across instances (BullMQ). */
  abstract stats(): Promise<LaneSchedulerStats>;
  /** Stops taking work and waits for running handlers. */
  abstract close(): Promise<void>;
  /**
   * This process's lanes of a version that are queued, running or waiting out a retry (in-process;
   * absent where the queue is shared). The sweep skips a busy version's read for lanes with work.
   */
  pendingOf?(tenantId: string, versionId: string): number;
  /** The shared queue an operators' Bull Board shows (BullMQ); absent where there is none (in-process). */
  boardAdapter?(): Queue;
}
