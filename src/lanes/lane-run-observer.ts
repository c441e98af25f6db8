import { Injectable } from '@nestjs/common';
import { AppliedSignal } from './applied-signal';
import { LaneApplied } from './lane-applied.port';
import { LaneRef } from './lane-ref';
import { VersionCatchUp } from './version-catch-up';

/**
 * Told by LaneRunner after a run of this instance stored its state and checkpoint: waiting readers
 * re-check (AppliedSignal), a catching-up version may be done (VersionCatchUp), and the capability
 * bound to the LaneApplied port acts (notifications: the projection's streams and webhook).
 */
@Injectable()
export class LaneRunObserver {
  constructor(
    private readonly signal: AppliedSignal,
    private readonly catchUp: VersionCatchUp,
    private readonly elsewhere: LaneApplied,
  ) {}

  /** `notifiedProjection`: the projection whose notification log this run wrote to, if any. */
  laneApplied(lane: LaneRef, appliedPosition: number, notifiedProjection: string | null): void {
    this.signal.notify(lane.versionId, lane.key);
    this.catchUp.schedule();
    this.elsewhere.laneApplied(lane, appliedPosition, notifiedProjection);
  }
}
