import { StoredEvent } from './event-log.port';
import { StateChange } from './notification-repository.port';

export interface ProjectionRecord {
  tenantId: string;
  projectionId: string;
  name: string;
  activeVersion: string | null;
  pendingVersion: string | null;
  createdAt: number;
  /** JSON text of the projection's NotificationSettings (webhook, sse), set by its latest deploy. */
  notifyConfig: string | null;
}

/**
 * A projection's notification settings as the store keeps them. notifications/ owns them (makes
 * and parses the text); the store never reads inside the text: what its own queries need (is there
 * a webhook?) is a column of its own.
 */
export interface StoredNotifySettings {
  notifyConfig: string | null;
  webhookUrl: string | null;
}

export interface DeployRequest extends Partial<StoredNotifySettings> {
  tenantId: string;
  projectionId: string;
  name: string;
  version: Omit<ProjectionVersion, 'routedPosition' | 'caughtUpAt'>;
}

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
}

/** One deploy of a projection (its uploadId), reading the log from the start on its own lanes. */
export interface ProjectionVersion {
  tenantId: string;
  versionId: string;
  projectionId: string;
  className: string;
  /** The tenant's head position when the version started: it has caught up once it applied up to here. */
  targetPosition: number;
  /** Every event up to here has been given to its lane's inbox (or found not to be the projection's). */
  routedPosition: number;
  caughtUpAt: number | null;
  createdAt: number;
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
  /** Inbox rows not yet applied. */
  inboxDepth: number;
  heldLanes: number;
  laneCount: number;
  /** Lowest position still in an inbox (unapplied), if any. */
  oldestUnapplied: number | null;
}

/** A live version a sweep has something to look at in. */
export interface SweepCandidate {
  version: ProjectionVersion;
  /** Its routed position is behind its tenant's head: events to route. */
  behindHead: boolean;
  /** It has inbox rows (unapplied, or held): lanes that may need a wake. */
  hasInbox: boolean;
}

/** A dropped version's tombstone: its lanes and inbox rows are purged by the sweep while it lasts. */
export interface DroppedVersion {
  tenantId: string;
  versionId: string;
  droppedAt: number;
}

/** What a router hands to one version's lanes after reading the log up to `routedPosition`. */
export interface VersionRoute {
  versionId: string;
  items: InboxItem[];
  routedPosition: number;
}

/** Projections, their versions, and the per-key lanes (inbox + state + checkpoint): the truth that schedulers only wake. */
export interface ProjectionRepository {
  getByName(tenantId: string, name: string): Promise<ProjectionRecord | null>;
  get(tenantId: string, projectionId: string): Promise<ProjectionRecord | null>;
  list(tenantId: string): Promise<ProjectionRecord[]>;
  /**
   * Creates the projection with `version` active, or makes `version` the pending version of the
   * existing one; a pending version it replaces is dropped in the same transaction (its row gone,
   * a tombstone written). Returns the projection.
   */
  deploy(p: DeployRequest): Promise<ProjectionRecord>;
  getVersion(tenantId: string, versionId: string): Promise<ProjectionVersion | null>;
  /** Those of these versions of one tenant that still exist, in one read (a tenant's router, whatever its number of projections). */
  versionsOf(tenantId: string, versionIds: string[]): Promise<ProjectionVersion[]>;
  /** Versions that are active or pending (what routers and sweepers work on), all tenants. */
  liveVersions(): Promise<ProjectionVersion[]>;
  /**
   * The live versions, all tenants, that are behind their tenant's head, have inbox rows, or have
   * not caught up yet, and the tombstones of dropped versions; in one statement, so an idle
   * version costs an index probe, not a round trip.
   */
  sweepCandidates(): Promise<{ live: SweepCandidate[]; dropped: DroppedVersion[] }>;
  /**
   * Adds inbox rows and advances the routed position, atomically; never moves it back. False, and
   * nothing written, when the version is gone (its router must stop).
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
  releaseLease(tenantId: string, versionId: string, key: string, owner: string): Promise<void>;
  listLanes(tenantId: string, versionId: string, opts: { afterKey: string; limit: number; heldOnly?: boolean }): Promise<LaneRecord[]>;
  /** Keys with unapplied, not held inbox rows: what a sweep wakes after a lost wake-up. */
  lanesWithWork(tenantId: string, versionId: string, limit: number): Promise<string[]>;
  /** Whether any inbox row at or below `position` is waiting on a lane that is not held. */
  hasUnappliedUpTo(tenantId: string, versionId: string, position: number): Promise<boolean>;
  markCaughtUp(tenantId: string, versionId: string, at: number): Promise<void>;
  /**
   * The pending version becomes active and the old active version is dropped (row gone, tombstone
   * written), atomically; the old one is returned for its lanes to be purged.
   */
  promote(tenantId: string, projectionId: string, versionId: string): Promise<string | null>;
  lag(tenantId: string, versionId: string): Promise<VersionLag>;
  /**
   * Lane and inbox rows of versions that are neither active nor pending in any projection, all
   * tenants (an operator's check; it scans both tables, so it is not on any hot path).
   */
  orphanRows(): Promise<{ lanes: number; inboxRows: number; versions: { tenantId: string; versionId: string }[] }>;
  /** Purges a dropped version: its lanes, inbox rows and row (idempotent; the tombstone stays). */
  dropVersion(tenantId: string, versionId: string): Promise<void>;
  /** Forgets a tombstone (its version's rows were purged after every late writer had finished). */
  forgetDropped(tenantId: string, versionId: string): Promise<void>;
  /**
   * Deletes the projection with its versions (rows gone, tombstones written), notifications,
   * deliveries and secret, in one transaction: the versions dropped, for their lanes to be purged;
   * null when there is no such projection.
   */
  delete(tenantId: string, projectionId: string): Promise<string[] | null>;
  /** Which of `keys` already have a lane in the version (the key limit counts only new ones). */
  existingKeys(tenantId: string, versionId: string, keys: string[]): Promise<Set<string>>;
  /** The version's lanes, `!unresolved` not counted: what the `keysPerProjection` limit counts. */
  keyCount(tenantId: string, versionId: string): Promise<number>;
}
