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

/** A dropped version's tombstone: its lanes and inbox rows are purged by the sweep while it lasts. */
export interface DroppedVersion {
  tenantId: string;
  versionId: string;
  droppedAt: number;
}

/**
 * The projection catalog: projections, their versions (active, pending) and the tombstones of
 * dropped ones. A drop (deploy over a pending version, promote, delete) deletes the version row and
 * writes its tombstone in one transaction; the version's lanes stay for the lane store's purge
 * (LaneSweep.dropVersion), which every lane write refuses from the drop on. Adapter:
 * SqlProjectionCatalogRepository (both stores, store.projections); callers in ARCHITECTURE.md's module list.
 */
export abstract class ProjectionCatalogRepository {
  abstract getByName(tenantId: string, name: string): Promise<ProjectionRecord | null>;
  abstract get(tenantId: string, projectionId: string): Promise<ProjectionRecord | null>;
  abstract list(tenantId: string): Promise<ProjectionRecord[]>;
  /**
   * Creates the projection with `version` active, or makes `version` the pending version of the
   * existing one; a pending version it replaces is dropped in the same transaction (its row gone,
   * a tombstone written). Returns the projection.
   */
  abstract deploy(p: DeployRequest): Promise<ProjectionRecord>;
  abstract getVersion(tenantId: string, versionId: string): Promise<ProjectionVersion | null>;
  /** Those of these versions of one tenant that still exist, in one read (a tenant's router, whatever its number of projections). */
  abstract versionsOf(tenantId: string, versionIds: string[]): Promise<ProjectionVersion[]>;
  /** Versions that are active or pending (what routers and sweepers work on), all tenants. */
  abstract liveVersions(): Promise<ProjectionVersion[]>;
  abstract markCaughtUp(tenantId: string, versionId: string, at: number): Promise<void>;
  /**
   * The pending version becomes active and the old active version is dropped (row gone, tombstone
   * written), atomically; the old one is returned for its lanes to be purged.
   */
  abstract promote(tenantId: string, projectionId: string, versionId: string): Promise<string | null>;
  /**
   * Deletes the projection with its versions (rows gone, tombstones written), notifications,
   * deliveries and secret, in one transaction: the versions dropped, for their lanes to be purged;
   * null when there is no such projection.
   */
  abstract delete(tenantId: string, projectionId: string): Promise<string[] | null>;
  /**
   * Forgets a tombstone (its version's rows were purged after every late writer had finished).
   * The catalog writes tombstones with its drops, so it forgets them too; the lane sweep says when.
   */
  abstract forgetDropped(tenantId: string, versionId: string): Promise<void>;
}
