import { LaneVersion } from './lane-key';
import { InboxItem, VersionRoute } from './lane-records';

/**
 * Where routing puts a version's events: the lanes' inbox rows and the version's routed position,
 * and the key counts the `keysPerProjection` limit checks before a new key gets a lane. Callers:
 * TenantRouter (routeMany), LaneRunner (route: events a run hands on to `!unresolved`), LaneKeyCap.
 * Adapters: SqlLaneInbox (lane writes in their own durability class), MemoryLaneInbox.
 * Every write is refused for a version the catalog no longer has.
 */
export abstract class LaneInbox {
  /**
   * Adds inbox rows and advances the version's routed position, atomically; never moves it back.
   * False, and nothing written, when the version is gone (its router must stop).
   */
  abstract route(version: LaneVersion, items: InboxItem[], routedPosition: number): Promise<boolean>;
  /**
   * `route` for several versions of one tenant in one transaction (a tenant's router after one read
   * of the log). Returns the versions found gone, none of whose rows were written; the others'
   * are (then each in a transaction of its own).
   */
  abstract routeMany(tenantId: string, routes: VersionRoute[]): Promise<string[]>;
  /**
   * Which of `keys` already have a counted lane in the version (the key limit counts only new ones); a
   * removed key (its state deleted, nothing left to apply) is not one: it counts again as new.
   */
  abstract existingKeys(version: LaneVersion, keys: string[]): Promise<Set<string>>;
  /**
   * The version's lanes that the `keysPerProjection` limit counts: not `!unresolved`, and not a removed
   * key's (state deleted by its projection, nothing left to apply).
   */
  abstract keyCount(version: LaneVersion): Promise<number>;
}
