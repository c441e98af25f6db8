import { LaneKey } from './lane-key';
import { AppliedChange, LaneWork } from './lane-records';

/** A failed attempt as LaneRuns.failed records it. */
export interface LaneFailure {
  position: number;
  error: string;
  /** The tenant code's failure details as JSON text (exception type, event, frames), kept with the hold. */
  failure?: string;
  /** Hold the lane at once (a poison event, an unresolvable key). */
  hold?: boolean;
  /** Hold it once this many attempts have failed. */
  holdAfterAttempts?: number;
}

/**
 * One lane's run: its work, its result (state and checkpoint), its failures and, with several
 * instances, its lease. Callers: LaneRunner; TenantRouter (failed: the `!unresolved` lane's hold).
 * Adapters: SqlLaneRuns (applied/consume in the lanes' own durability class), MemoryLaneRuns.
 */
export abstract class LaneRuns {
  /**
   * The lane (created empty if new) and up to `limit` events of its inbox after its applied
   * position; null when the version is gone (nothing is created for it).
   */
  abstract laneWork(lane: LaneKey, limit: number): Promise<LaneWork | null>;
  /**
   * Records applied events: new state and checkpoint, inbox rows up to it removed, attempts reset;
   * false (and nothing written) when the lane's checkpoint is no longer `fromPosition` or the
   * version is gone.
   */
  abstract applied(lane: LaneKey, change: AppliedChange): Promise<boolean>;
  /** Moves a lane's checkpoint past `position` without a state (events handed on elsewhere). */
  abstract consume(lane: LaneKey, position: number): Promise<void>;
  /**
   * Counts a failed attempt and returns the count; with `hold`, or once the count reaches
   * `holdAfterAttempts`, the lane stops on `position` until retried or skipped.
   */
  abstract failed(lane: LaneKey, failure: LaneFailure): Promise<number>;
  /** Takes the lane's lease for `owner` until `until` (epoch ms) if free or expired; false if another holds it. */
  abstract acquireLease(lane: LaneKey, owner: string, now: number, until: number): Promise<boolean>;
  /** Extends `owner`'s lease to `until` while its run lasts; false when it no longer holds it (taken over after lapsing). */
  abstract renewLease(lane: LaneKey, owner: string, until: number): Promise<boolean>;
  abstract releaseLease(lane: LaneKey, owner: string): Promise<void>;
}
