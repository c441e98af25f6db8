import { StoredEvent } from '../../event-log.port';
import { DroppedVersion, ProjectionVersion } from '../../projection-catalog.port';
import { LaneKey, LaneVersion } from '../lane-key';
import { LaneRecord } from '../lane-records';

/** A lane row as the memory adapter keeps it: the record plus its lease. */
export interface MemoryLane extends LaneRecord {
  leaseOwner: string | null;
  leaseUntil: number | null;
}

/** The projection row's part the lanes read: which versions are live. */
export interface MemoryProjection {
  tenantId: string;
  projectionId: string;
  activeVersion: string | null;
  pendingVersion: string | null;
}

const versionId = (v: LaneVersion) => `${v.tenantId}\u0000${v.versionId}`;
const laneId = (l: LaneKey) => `${versionId(l)}\u0000${l.key}`;

/**
 * The rows the in-memory lane roles (memory-lanes.ts) keep and read, in place of the SQL tables:
 * the lanes' own (lanes, inbox) and what they read of the catalog and the log (versions,
 * projections, tombstones, events, heads, notification heads). Whoever sets a test up writes the
 * latter (MemoryLaneWorld in test/support does it the way the catalog and the log would).
 */
export class MemoryLaneTables {
  readonly versions = new Map<string, ProjectionVersion>();
  readonly projections = new Map<string, MemoryProjection>();
  readonly dropped = new Map<string, DroppedVersion>();
  /** tenant → its events in position order. */
  readonly events = new Map<string, StoredEvent[]>();
  /** tenant and projection → its notification log's last sequence. */
  readonly notificationHeads = new Map<string, number>();
  private readonly lanes = new Map<string, MemoryLane>();
  /** version → key → inbox positions. */
  private readonly inbox = new Map<string, Map<string, Set<number>>>();

  version(v: LaneVersion): ProjectionVersion | undefined {
    return this.versions.get(versionId(v));
  }

  putVersion(v: ProjectionVersion): void {
    this.versions.set(versionId(v), v);
  }

  deleteVersion(v: LaneVersion): void {
    this.versions.delete(versionId(v));
  }

  head(tenantId: string): number {
    const events = this.events.get(tenantId);
    return events?.length ? events[events.length - 1].position : 0;
  }

  event(tenantId: string, position: number): StoredEvent | undefined {
    return this.events.get(tenantId)?.find((e) => e.position === position);
  }

  lane(l: LaneKey): MemoryLane | undefined {
    return this.lanes.get(laneId(l));
  }

  /** The lane's row, made empty if new: only for a version that still exists. */
  liveLane(l: LaneKey): MemoryLane | undefined {
    const found = this.lane(l);
    if (found || !this.version(l)) return found;
    const lane: MemoryLane = {
      key: l.key,
      state: null,
      appliedPosition: 0,
      updatedAt: null,
      heldPosition: null,
      heldError: null,
      heldFailure: null,
      attempts: 0,
      leaseOwner: null,
      leaseUntil: null,
    };
    this.lanes.set(laneId(l), lane);
    return lane;
  }

  /** The version's lanes in key order. */
  lanesOf(v: LaneVersion): MemoryLane[] {
    const prefix = `${versionId(v)}\u0000`;
    return [...this.lanes]
      .filter(([id]) => id.startsWith(prefix))
      .map(([, l]) => l)
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** Every version that has lane or inbox rows. */
  versionsWithRows(): LaneVersion[] {
    const ids = new Set<string>([...this.inbox.keys()]);
    for (const id of this.lanes.keys()) ids.add(id.split('\u0000').slice(0, 2).join('\u0000'));
    return [...ids].map((id) => {
      const [tenantId, vId] = id.split('\u0000');
      return { tenantId, versionId: vId };
    });
  }

  /** The version's inbox rows as [key, position]. */
  inboxOf(v: LaneVersion): [string, number][] {
    const rows: [string, number][] = [];
    for (const [key, positions] of this.inbox.get(versionId(v)) ?? []) for (const p of positions) rows.push([key, p]);
    return rows;
  }

  /** Whether an inbox row is one its lane has not applied yet (a row at or below the lane's position is spent). */
  unapplied(v: LaneVersion, key: string, position: number): boolean {
    return position > (this.lane({ ...v, key })?.appliedPosition ?? 0);
  }

  addInbox(l: LaneKey, position: number): void {
    let byKey = this.inbox.get(versionId(l));
    if (!byKey) this.inbox.set(versionId(l), (byKey = new Map()));
    let positions = byKey.get(l.key);
    if (!positions) byKey.set(l.key, (positions = new Set()));
    positions.add(position);
  }

  /** Removes the lane's inbox rows at or below `upTo`; returns how many. */
  removeInbox(l: LaneKey, upTo: number): number {
    const positions = this.inbox.get(versionId(l))?.get(l.key);
    if (!positions) return 0;
    let n = 0;
    for (const p of [...positions])
      if (p <= upTo) {
        positions.delete(p);
        n++;
      }
    if (positions.size === 0) this.inbox.get(versionId(l))!.delete(l.key);
    if (this.inbox.get(versionId(l))!.size === 0) this.inbox.delete(versionId(l));
    return n;
  }

  /** The version's lanes and inbox rows gone. */
  removeRows(v: LaneVersion): void {
    this.inbox.delete(versionId(v));
    const prefix = `${versionId(v)}\u0000`;
    for (const id of [...this.lanes.keys()]) if (id.startsWith(prefix)) this.lanes.delete(id);
  }

  /** Whether the version is the active or pending one of a projection of its tenant. */
  isLive(v: LaneVersion): boolean {
    for (const p of this.projections.values())
      if (p.tenantId === v.tenantId && (p.activeVersion === v.versionId || p.pendingVersion === v.versionId)) return true;
    return false;
  }

  /** Live versions in tenant, projection, version order, with their projection's role. */
  liveVersions(): { version: ProjectionVersion; role: 'active' | 'pending' }[] {
    const out: { version: ProjectionVersion; role: 'active' | 'pending' }[] = [];
    for (const p of this.projections.values())
      for (const [id, role] of [
        [p.activeVersion, 'active'],
        [p.pendingVersion, 'pending'],
      ] as const) {
        const version = id === null ? undefined : this.version({ tenantId: p.tenantId, versionId: id });
        if (version) out.push({ version, role });
      }
    const order = (v: ProjectionVersion) => [v.tenantId, v.projectionId, v.versionId].join('\u0000');
    return out.sort((a, b) => (order(a.version) < order(b.version) ? -1 : 1));
  }
}
