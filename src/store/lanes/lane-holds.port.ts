import { LaneKey } from './lane-key';
import { LaneRecord } from './lane-records';

/**
 * An operator's actions on a held lane (POST /projections/{id}/lanes/{key}/retry|skip). Caller:
 * LaneOperations. Adapters: SqlLaneHolds (the lanes' pool, synchronous commits), MemoryLaneHolds.
 */
export abstract class LaneHolds {
  abstract getLane(lane: LaneKey): Promise<LaneRecord | null>;
  /** Clears the hold (and the attempt count) so the lane tries the event again. */
  abstract release(lane: LaneKey): Promise<boolean>;
  /** Drops the held event from the lane (its state is not changed by it) and clears the hold. */
  abstract skip(lane: LaneKey): Promise<boolean>;
}
