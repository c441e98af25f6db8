import { StoredEvent } from '../event-log.port';
import { StateChange } from '../notification-repository.port';
import { ProjectionVersion } from '../projection-catalog.port';

/** The values the lane roles (lane-*.port.ts) take and return. */

export interface AppliedChange {
  /** JSON text of the state after the last event; null when its projection removed the key's state (IDeletableProjection). */
  state: string | null;
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
  /** JSON text, null before the first Apply and after its projection removed the key's state (IDeletableProjection). */
  state: string | null;
  appliedPosition: number;
  updatedAt: number | null;
  heldPosition: number | null;
  heldError: string | null;
  /** With heldPosition: the failure's details as JSON text (LaneFailure.failure), null when it had none. */
  heldFailure: string | null;
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

/** A version's work waiting: rows in its lanes' inboxes plus events of the log not yet routed to any (status API and metrics alike). */
export function totalInboxDepth(inboxRows: number, headPosition: number, routedPosition: number): number {
  return inboxRows + Math.max(0, headPosition - routedPosition);
}
