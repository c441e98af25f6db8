import { LaneKey } from '../store/lanes/lane-key';

/** A lane as the scheduler hands it around: one state key of one projection version (the store's LaneKey). */
export type LaneRef = LaneKey;

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

/**
 * What a run returns to its scheduler: the outcome, and the lanes it handed events to (a rerouting
 * run of `!unresolved`), which the scheduler wakes; so the runner needs no scheduler of its own.
 */
export type LaneRunResult = LaneRunOutcome & { wake?: LaneRef[] };
