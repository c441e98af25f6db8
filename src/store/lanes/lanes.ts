import { LaneGauges } from './lane-gauges.port';
import { LaneHolds } from './lane-holds.port';
import { LaneInbox } from './lane-inbox.port';
import { LaneReads } from './lane-reads.port';
import { LaneRuns } from './lane-runs.port';
import { LaneSweep } from './lane-sweep.port';

/**
 * The per-key lanes of projection versions (inbox + state + checkpoint + hold + lease), the truth
 * that schedulers only wake, as the roles their callers use. A store provides all of them over its
 * own connections (Store.lanes); StoreModule provides each under its port.
 */
export interface Lanes {
  readonly inbox: LaneInbox;
  readonly runs: LaneRuns;
  readonly holds: LaneHolds;
  readonly reads: LaneReads;
  readonly sweep: LaneSweep;
  readonly gauges: LaneGauges;
}
