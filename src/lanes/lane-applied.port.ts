import { LaneRef } from './lane-scheduler.port';

/**
 * Told after a lane run of this instance stored its state and checkpoint. LaneRunner calls it;
 * LaneEngine implements it (minPosition readers, the catch-up check) and passes it on to the
 * capability bound to this port (NotificationsModule binds it to NotificationFeed: wakes the projection's
 * streams and webhook).
 */
export abstract class LaneApplied {
  /** `notifiedProjection`: the projection whose notification log this run wrote to, if any. */
  abstract laneApplied(lane: LaneRef, appliedPosition: number, notifiedProjection: string | null): void;
}

export const NO_LANE_APPLIED: LaneApplied = { laneApplied: () => undefined };
