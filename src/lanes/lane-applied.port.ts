import { LaneRef } from './lane-ref';

/**
 * Told after a lane run of this instance stored its state and checkpoint, beyond the lanes' own
 * bookkeeping (LaneRunObserver calls it). The port by which lanes/ tells the capability above it
 * without importing it: NotificationsModule binds it (NotificationFeed: wakes the projection's
 * streams and webhook), is global, and exports it.
 */
export abstract class LaneApplied {
  /** `notifiedProjection`: the projection whose notification log this run wrote to, if any. */
  abstract laneApplied(lane: LaneRef, appliedPosition: number, notifiedProjection: string | null): void;
}

/** Nothing else acts on applied lanes (unit setups). */
export const NO_LANE_APPLIED: LaneApplied = { laneApplied: () => undefined };
