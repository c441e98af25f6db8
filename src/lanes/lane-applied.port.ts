import { LaneRef } from './lane-scheduler.port';

/**
 * Told after a lane run of this instance stored its state and checkpoint. LaneRunner calls it;
 * LaneEngine implements it (minPosition readers, the catch-up check) and passes it on to the
 * capability bound to LANE_APPLIED (notifications: wakes the projection's streams and webhook).
 */
export interface LaneApplied {
  /** `notifiedProjection`: the projection whose notification log this run wrote to, if any. */
  laneApplied(lane: LaneRef, appliedPosition: number, notifiedProjection: string | null): void;
}

/** Bound by the module that acts on applied lanes beyond lanes themselves (NotificationsModule). */
export const LANE_APPLIED = Symbol('LANE_APPLIED');

export const NO_LANE_APPLIED: LaneApplied = { laneApplied: () => undefined };
