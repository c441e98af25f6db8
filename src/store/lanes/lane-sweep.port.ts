import { DroppedVersion } from '../projection-catalog.port';
import { LaneVersion } from './lane-key';
import { SweepCandidate } from './lane-records';

/**
 * What the lanes' periodic sweep and an operator's check look at across all tenants: versions with
 * something to do, lanes with work after a lost wake-up, spent rows, dropped versions' rows.
 * Callers: LaneEngine (the sweep, a version's drop), AdminLanesView (orphanRows).
 * Adapters: SqlLaneSweep, MemoryLaneSweep.
 */
export abstract class LaneSweep {
  /**
   * The live versions, all tenants, that are behind their tenant's head, have inbox rows, or have
   * not caught up yet, and the tombstones of dropped versions; in one statement, so an idle
   * version costs an index probe, not a round trip.
   */
  abstract sweepCandidates(): Promise<{ live: SweepCandidate[]; dropped: DroppedVersion[] }>;
  /** Keys with unapplied, not held inbox rows: what a sweep wakes after a lost wake-up. */
  abstract lanesWithWork(version: LaneVersion, limit: number): Promise<string[]>;
  /**
   * Removes the version's spent inbox rows (at or below their lane's applied position), which
   * routing no longer makes but an older release or an operator's skip may have left; returns how
   * many. It visits every inbox row of the version: the sweep calls it only when no lane has work.
   */
  abstract purgeSpent(version: LaneVersion): Promise<number>;
  /** Whether any inbox row at or below `position` is waiting on a lane that is not held. */
  abstract hasUnappliedUpTo(version: LaneVersion, position: number): Promise<boolean>;
  /**
   * Purges a dropped version: its lanes, inbox rows and row, in one transaction (idempotent; the
   * tombstone stays until the catalog forgets it). The version row is normally gone already, with
   * the drop that wrote the tombstone.
   */
  abstract dropVersion(version: LaneVersion): Promise<void>;
  /**
   * Lane and inbox rows of versions that are neither active nor pending in any projection, all
   * tenants (an operator's check; it scans both tables, so it is not on any hot path).
   */
  abstract orphanRows(): Promise<{ lanes: number; inboxRows: number; versions: LaneVersion[] }>;
}
