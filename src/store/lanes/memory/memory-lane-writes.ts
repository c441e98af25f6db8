import { LaneHolds } from '../lane-holds.port';
import { LaneInbox } from '../lane-inbox.port';
import { LaneKey, LaneVersion } from '../lane-key';
import { AppliedChange, InboxItem, LaneRecord, LaneWork, VersionRoute } from '../lane-records';
import { LaneFailure, LaneRuns } from '../lane-runs.port';
import { heldFailure } from '../lane-failure-text';
import { MemoryLane, MemoryLaneTables } from './memory-lane-tables';

/** A copy of the lane's record, without its lease (what the SQL adapters read). */
export function laneRecord(l: MemoryLane): LaneRecord {
  const { leaseOwner: _owner, leaseUntil: _until, ...record } = l;
  return { ...record };
}

/** LaneInbox in memory, for unit tests: the same answers as SqlLaneInbox (the lane roles' conformance suite). */
export class MemoryLaneInbox implements LaneInbox {
  constructor(private readonly tables: MemoryLaneTables) {}

  async route(version: LaneVersion, items: InboxItem[], routedPosition: number): Promise<boolean> {
    const v = this.tables.version(version);
    if (!v) return false;
    this.tables.putVersion({ ...v, routedPosition: Math.max(v.routedPosition, routedPosition) });
    for (const it of items) {
      const lane = this.tables.liveLane({ ...version, key: it.key })!;
      // An inbox row is consumed once: one at or below its lane's applied position is never put back.
      if (lane.appliedPosition < it.position) this.tables.addInbox({ ...version, key: it.key }, it.position);
    }
    return true;
  }

  async routeMany(tenantId: string, routes: VersionRoute[]): Promise<string[]> {
    const gone: string[] = [];
    for (const r of routes)
      if (!(await this.route({ tenantId, versionId: r.versionId }, r.items, r.routedPosition))) gone.push(r.versionId);
    return gone;
  }

  async existingKeys(version: LaneVersion, keys: string[]): Promise<Set<string>> {
    return new Set(keys.filter((key) => this.counted(version, this.tables.lane({ ...version, key }))));
  }

  async keyCount(version: LaneVersion): Promise<number> {
    return this.tables.lanesOf(version).filter((l) => this.counted(version, l)).length;
  }

  /** As sql-lane-rows' COUNTED_LANE: a removed key's lane (no state past its first event, nothing left to apply) is not counted. */
  private counted(version: LaneVersion, l: MemoryLane | undefined): boolean {
    if (!l || l.key === '!unresolved') return false;
    return (
      l.state !== null || l.appliedPosition === 0 || this.tables.inboxOf(version).some(([key, p]) => key === l.key && p > l.appliedPosition)
    );
  }
}

/** LaneRuns in memory, for unit tests: the same answers as SqlLaneRuns. */
export class MemoryLaneRuns implements LaneRuns {
  constructor(private readonly tables: MemoryLaneTables) {}

  async laneWork(ref: LaneKey, limit: number): Promise<LaneWork | null> {
    // The version and the lane in one read: a run of a dropped version stops here.
    const lane = this.tables.version(ref) && this.tables.liveLane(ref);
    if (!lane) return null;
    const events = this.tables
      .inboxOf(ref)
      .filter(([key, p]) => key === ref.key && p > lane.appliedPosition)
      .map(([, p]) => p)
      .sort((a, b) => a - b)
      .flatMap((p) => this.tables.event(ref.tenantId, p) ?? [])
      .slice(0, limit);
    return { lane: laneRecord(lane), events };
  }

  async applied(ref: LaneKey, r: AppliedChange): Promise<boolean> {
    const lane = this.tables.lane(ref);
    if (!lane || !this.tables.version(ref) || lane.appliedPosition !== r.fromPosition) return false;
    if (r.leaseOwner !== undefined && lane.leaseOwner !== r.leaseOwner) return false;
    Object.assign(lane, { state: r.state, appliedPosition: r.appliedPosition, updatedAt: r.updatedAt, attempts: 0 });
    if (r.notify?.changes.length) {
      const head = `${ref.tenantId}\u0000${r.notify.projectionId}`;
      this.tables.notificationHeads.set(head, (this.tables.notificationHeads.get(head) ?? 0) + r.notify.changes.length);
    }
    this.tables.removeInbox(ref, r.appliedPosition);
    return true;
  }

  async consume(ref: LaneKey, position: number): Promise<void> {
    const lane = this.tables.lane(ref);
    if (lane) Object.assign(lane, { appliedPosition: Math.max(lane.appliedPosition, position), attempts: 0 });
    this.tables.removeInbox(ref, position);
  }

  async failed(ref: LaneKey, r: LaneFailure): Promise<number> {
    const lane = this.tables.lane(ref);
    if (!lane) return 0;
    lane.attempts += 1;
    if (lane.heldPosition === null && (r.hold || lane.attempts >= (r.holdAfterAttempts ?? Number.MAX_SAFE_INTEGER))) {
      lane.heldPosition = r.position;
      lane.heldError = r.error.slice(0, 4000);
      lane.heldFailure = heldFailure(r);
    }
    return lane.attempts;
  }

  async acquireLease(ref: LaneKey, owner: string, now: number, until: number): Promise<boolean> {
    const lane = this.tables.liveLane(ref);
    if (!lane || (lane.leaseUntil !== null && lane.leaseUntil >= now && lane.leaseOwner !== owner)) return false;
    Object.assign(lane, { leaseOwner: owner, leaseUntil: until });
    return true;
  }

  async renewLease(ref: LaneKey, owner: string, until: number): Promise<boolean> {
    const lane = this.tables.lane(ref);
    if (!lane || lane.leaseOwner !== owner || lane.leaseUntil === null) return false;
    lane.leaseUntil = until;
    return true;
  }

  async releaseLease(ref: LaneKey, owner: string): Promise<void> {
    const lane = this.tables.lane(ref);
    if (lane?.leaseOwner === owner) lane.leaseUntil = null;
  }
}

/** LaneHolds in memory, for unit tests: the same answers as SqlLaneHolds. */
export class MemoryLaneHolds implements LaneHolds {
  constructor(private readonly tables: MemoryLaneTables) {}

  async getLane(ref: LaneKey): Promise<LaneRecord | null> {
    const lane = this.tables.lane(ref);
    return lane ? laneRecord(lane) : null;
  }

  async release(ref: LaneKey): Promise<boolean> {
    const lane = this.tables.lane(ref);
    if (!lane || lane.heldPosition === null) return false;
    Object.assign(lane, { heldPosition: null, heldError: null, heldFailure: null, attempts: 0 });
    return true;
  }

  async skip(ref: LaneKey): Promise<boolean> {
    const lane = this.tables.lane(ref);
    if (!lane || lane.heldPosition === null) return false;
    const held = lane.heldPosition;
    this.tables.removeInbox(ref, held);
    Object.assign(lane, {
      heldPosition: null,
      heldError: null,
      heldFailure: null,
      attempts: 0,
      appliedPosition: Math.max(lane.appliedPosition, held),
    });
    return true;
  }
}
