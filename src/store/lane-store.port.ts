import { StoredEvent } from './event-log.port';
import { StateChange } from './notification-repository.port';
import { DroppedVersion, ProjectionVersion } from './projection-catalog.port';

export interface AppliedChange {
  /** JSON text of the state after the last event. */
  state: string;
  /**
   * The checkpoint the run read with its events: the change is kept only if the lane is still there.
   * Two runs of one lane (a Redis flush re-queues a running lane, a lease lapses under load) both
   * read the same checkpoint; the second to store would otherwise overwrite the first's state with
   * one that lacks the events the first consumed.
   */
  fromPosition: number;
  appliedPosition: number;
  updatedAt: number;
  /** State changes to log as notifications in the same transaction (one per event, ascending). */
  notify?: { projectionId: string; changes: StateChange[] };
  /**
   * With several instances: kept only while this owner still holds the lane's lease. A run whose
   * lease lapsed (a long pause) and was taken by another instance keeps nothing: the fence that,
   * with `fromPosition`, makes one run's write the only one for a stretch of the lane.
   */
  leaseOwner?: string;
}

export interface LaneRecord {
  key: string;
  /** JSON text, null before the first Apply. */
  state: string | null;
  appliedPosition: number;
  updatedAt: number | null;
  heldPosition: number | null;
  heldError: string | null;
  attempts: number;
}

export interface InboxItem {
  key: string;
  position: number;
}

export interface LaneWork {
  lane: LaneRecord;
  /** Events in the lane's inbox after its applied position, in order. */
  events: StoredEvent[];
}

export interface VersionLag {
  /** Inbox rows not yet applied (above their lane's applied position; spent rows are not counted). */
  inboxDepth: number;
  heldLanes: number;
  laneCount: number;
  /** Lowest position still in an inbox (unapplied), if any. */
  oldestUnapplied: number | null;
}

/** One live version's figures for the metrics scrape (GET /metrics), all tenants in one statement. */
export interface VersionGauges {
  tenantId: string;
  projectionId: string;
  versionId: string;
  role: 'active' | 'pending';
  /** The tenant's last position. */
  headPosition: number;
  routedPosition: number;
  /** Everything up to here is applied (as ProjectionReader.lag counts it: the oldest inbox row, else the routed position). */
  appliedPosition: number;
  /** Inbox rows not yet applied (events routed to a lane, held ones included). */
  inboxRows: number;
  heldLanes: number;
  laneCount: number;
  /** Timestamp (epoch ms) of the first event after `appliedPosition`; null when there is none. */
  oldestUnappliedAt: number | null;
  /** The projection's notification log head (its last sequence; 0 before the first). */
  notificationHead: number;
}

/** A live version a sweep has something to look at in. */
export interface SweepCandidate {
  version: ProjectionVersion;
  /** Its routed position is behind its tenant's head: events to route. */
  behindHead: boolean;
  /** It has inbox rows (unapplied, or held): lanes that may need a wake. */
  hasInbox: boolean;
}

/** What a router hands to one version's lanes after reading the log up to `routedPosition`. */
export interface VersionRoute {
  versionId: string;
  items: InboxItem[];
  routedPosition: number;
}

/**
 * The per-key lanes of projection versions (inbox + state + checkpoint + hold + lease): the truth
 * that schedulers only wake. Every write is refused for a version the catalog no longer has (the
 * version row is read or guarded in the write's own transaction).
 */
export interface LaneStore {
  /**
   * Adds inbox rows and advances the version's routed position, atomically; never moves it back.
   * False, and nothing written, when the version is gone (its router must stop).
   */
  route(tenantId: string, versionId: string, items: InboxItem[], routedPosition: number): Promise<boolean>;
  /**
   * `route` for several versions of one tenant in one transaction (a tenant's router after one read
   * of the log). Returns the versions found gone, none of whose rows were written; the others'
   * are (then each in a transaction of its own).
   */
  routeMany(tenantId: string, routes: VersionRoute[]): Promise<string[]>;
  /**
   * The lane (created empty if new) and up to `limit` events of its inbox after its applied
   * position; null when the version is gone (nothing is created for it).
   */
  laneWork(tenantId: string, versionId: string, key: string, limit: number): Promise<LaneWork | null>;
  /**
   * Records applied events: new state and checkpoint, inbox rows up to it removed, attempts reset;
   * false (and nothing written) when the lane's checkpoint is no longer `fromPosition` or the
   * version is gone.
   */
  applied(tenantId: string, versionId: string, key: string, r: AppliedChange): Promise<boolean>;
  /** Moves a lane's checkpoint past `position` without a state (events handed on elsewhere). */
  consume(tenantId: string, versionId: string, key: string, position: number): Promise<void>;
  /**
   * Counts a failed attempt and returns the count; with `hold`, or once the count reaches
   * `holdAfterAttempts`, the lane stops on `position` until retried or skipped.
   */
  failed(
    tenantId: string,
    versionId: string,
    key: string,
    r: { position: number; error: string; hold?: boolean; holdAfterAttempts?: number },
  ): Promise<number>;
  /** Operator: clears the hold (and the attempt count) so the lane tries the event again. */
  release(tenantId: string, versionId: string, key: string): Promise<boolean>;
  /** Operator: drops the held event from the lane (its state is not changed by it) and clears the hold. */
  skip(tenantId: string, versionId: string, key: string): Promise<boolean>;
  getLane(tenantId: string, versionId: string, key: string): Promise<LaneRecord | null>;
  /** The lowest inbox position of the lane above `after`, if any (read-only: state reads use it). */
  nextInboxPosition(tenantId: string, versionId: string, key: string, after: number): Promise<number | null>;
  /** Takes the lane's lease for `owner` until `until` (epoch ms) if free or expired; false if another holds it. */
  acquireLease(tenantId: string, versionId: string, key: string, owner: string, now: number, until: number): Promise<boolean>;
  /** Extends `owner`'s lease to `until` while its run lasts; false when it no longer holds it (taken over after lapsing). */
  renewLease(tenantId: string, versionId: string, key: string, owner: string, until: number): Promise<boolean>;
  releaseLease(tenantId: string, versionId: string, key: string, owner: string): Promise<void>;
  listLanes(tenantId: string, versionId: string, opts: { afterKey: string; limit: number; heldOnly?: boolean }): Promise<LaneRecord[]>;
  /** Keys with unapplied, not held inbox rows: what a sweep wakes after a lost wake-up. */
  lanesWithWork(tenantId: string, versionId: string, limit: number): Promise<string[]>;
  /**
   * Removes the version's spent inbox rows (at or below their lane's applied position), which
   * routing no longer makes but an older release or an operator's skip may have left; returns how
   * many. It visits every inbox row of the version: the sweep calls it only when no lane has work.
   */
  purgeSpent(tenantId: string, versionId: string): Promise<number>;
  /** Whether any inbox row at or below `position` is waiting on a lane that is not held. */
  hasUnappliedUpTo(tenantId: string, versionId: string, position: number): Promise<boolean>;
  lag(tenantId: string, versionId: string): Promise<VersionLag>;
  /**
   * The position of the version's oldest unapplied inbox row (null: none), read by the index in
   * position order: what a catching-up state read needs, without lag()'s counts, which scan every
   * inbox row (issue 25: a tenant catching up 100,000 keys whose state was polled spent the event
   * loop on those counts).
   */
  oldestUnapplied(tenantId: string, versionId: string): Promise<number | null>;
  /**
   * Every live (active or pending) version of every tenant with its lag figures and its
   * projection's notification head, in ONE statement: a metrics scrape costs one round trip
   * however many projections there are (it reads the lane and inbox rows once, grouped).
   */
  versionGauges(): Promise<VersionGauges[]>;
  /** Which of `keys` already have a lane in the version (the key limit counts only new ones). */
  existingKeys(tenantId: string, versionId: string, keys: string[]): Promise<Set<string>>;
  /** The version's lanes, `!unresolved` not counted: what the `keysPerProjection` limit counts. */
  keyCount(tenantId: string, versionId: string): Promise<number>;
  /**
   * The live versions, all tenants, that are behind their tenant's head, have inbox rows, or have
   * not caught up yet, and the tombstones of dropped versions; in one statement, so an idle
   * version costs an index probe, not a round trip.
   */
  sweepCandidates(): Promise<{ live: SweepCandidate[]; dropped: DroppedVersion[] }>;
  /**
   * Purges a dropped version: its lanes, inbox rows and row, in one transaction (idempotent; the
   * tombstone stays until the catalog forgets it). The version row is normally gone already, with
   * the drop that wrote the tombstone.
   */
  dropVersion(tenantId: string, versionId: string): Promise<void>;
  /**
   * Lane and inbox rows of versions that are neither active nor pending in any projection, all
   * tenants (an operator's check; it scans both tables, so it is not on any hot path).
   */
  orphanRows(): Promise<{ lanes: number; inboxRows: number; versions: { tenantId: string; versionId: string }[] }>;
}

/** A version's work waiting: rows in its lanes' inboxes plus events of the log not yet routed to any (status API and metrics alike). */
export function totalInboxDepth(inboxRows: number, headPosition: number, routedPosition: number): number {
  return inboxRows + Math.max(0, headPosition - routedPosition);
}
