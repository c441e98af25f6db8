import { LaneKey, LaneVersion } from './lane-key';
import { LaneRecord, VersionLag } from './lane-records';

/**
 * Lane reads on a request's path: a projection's state, its keys, its lag. Caller:
 * ProjectionReader. Adapters: SqlLaneReads (on PostgreSQL over the ordinary pool, so a state read
 * never waits for a client of the lanes' own pool while the lanes are saturated), MemoryLaneReads.
 */
export abstract class LaneReads {
  abstract getLane(lane: LaneKey): Promise<LaneRecord | null>;
  /** The lowest inbox position of the lane above `after`, if any (read-only: state reads use it). */
  abstract nextInboxPosition(lane: LaneKey, after: number): Promise<number | null>;
  abstract listLanes(version: LaneVersion, opts: { afterKey: string; limit: number; heldOnly?: boolean }): Promise<LaneRecord[]>;
  abstract lag(version: LaneVersion): Promise<VersionLag>;
  /**
   * The position of the version's oldest unapplied inbox row (null: none), read by the index in
   * position order: what a catching-up state read needs, without lag()'s counts, which scan every
   * inbox row (issue 25: a tenant catching up 100,000 keys whose state was polled spent the event
   * loop on those counts).
   */
  abstract oldestUnapplied(version: LaneVersion): Promise<number | null>;
}
