import { DroppedVersion } from '../../projection-catalog.port';
import { LaneGauges } from '../lane-gauges.port';
import { LaneKey, LaneVersion } from '../lane-key';
import { LaneRecord, SweepCandidate, VersionGauges, VersionLag } from '../lane-records';
import { LaneReads } from '../lane-reads.port';
import { LaneSweep } from '../lane-sweep.port';
import { MemoryLaneTables } from './memory-lane-tables';
import { laneRecord } from './memory-lane-writes';

/** The version's unapplied inbox positions, ascending. */
function unappliedPositions(tables: MemoryLaneTables, v: LaneVersion): number[] {
  return tables
    .inboxOf(v)
    .filter(([key, p]) => tables.unapplied(v, key, p))
    .map(([, p]) => p)
    .sort((a, b) => a - b);
}

/** The version's lanes as lag counts them: with a state or a hold. */
function countedLanes(tables: MemoryLaneTables, v: LaneVersion) {
  const lanes = tables.lanesOf(v).filter((l) => l.state !== null || l.heldPosition !== null);
  return { lanes: lanes.length, held: lanes.filter((l) => l.heldPosition !== null).length };
}

/** Inbox rows of lanes that are not held and have not applied them, at or below `upTo`. */
function workRows(tables: MemoryLaneTables, v: LaneVersion, upTo = Infinity): [string, number][] {
  return tables
    .inboxOf(v)
    .filter(([key, p]) => p <= upTo && (tables.lane({ ...v, key })?.heldPosition ?? null) === null && tables.unapplied(v, key, p));
}

/** LaneReads in memory, for unit tests: the same answers as SqlLaneReads. */
export class MemoryLaneReads implements LaneReads {
  constructor(private readonly tables: MemoryLaneTables) {}

  async getLane(ref: LaneKey): Promise<LaneRecord | null> {
    const lane = this.tables.lane(ref);
    return lane ? laneRecord(lane) : null;
  }

  async nextInboxPosition(ref: LaneKey, after: number): Promise<number | null> {
    const positions = this.tables
      .inboxOf(ref)
      .filter(([key, p]) => key === ref.key && p > after)
      .map(([, p]) => p);
    return positions.length ? Math.min(...positions) : null;
  }

  async listLanes(version: LaneVersion, opts: { afterKey: string; limit: number; heldOnly?: boolean }): Promise<LaneRecord[]> {
    return this.tables
      .lanesOf(version)
      .filter((l) => l.key > opts.afterKey && (opts.heldOnly ? l.heldPosition !== null : l.state !== null))
      .slice(0, opts.limit)
      .map(laneRecord);
  }

  async lag(version: LaneVersion): Promise<VersionLag> {
    const unapplied = unappliedPositions(this.tables, version);
    const { lanes, held } = countedLanes(this.tables, version);
    return { inboxDepth: unapplied.length, heldLanes: held, laneCount: lanes, oldestUnapplied: unapplied[0] ?? null };
  }

  async oldestUnapplied(version: LaneVersion): Promise<number | null> {
    return unappliedPositions(this.tables, version)[0] ?? null;
  }
}

/** LaneSweep in memory, for unit tests: the same answers as SqlLaneSweep. */
export class MemoryLaneSweep implements LaneSweep {
  constructor(private readonly tables: MemoryLaneTables) {}

  async sweepCandidates(): Promise<{ live: SweepCandidate[]; dropped: DroppedVersion[] }> {
    const live = this.tables
      .liveVersions()
      .map(({ version }) => ({
        version: { ...version },
        behindHead: version.routedPosition < this.tables.head(version.tenantId),
        hasInbox: this.tables.inboxOf(version).length > 0,
      }))
      .filter((c) => c.behindHead || c.hasInbox || c.version.caughtUpAt === null);
    return { live, dropped: [...this.tables.dropped.values()].map((d) => ({ ...d })) };
  }

  async lanesWithWork(version: LaneVersion, limit: number): Promise<string[]> {
    return [...new Set(workRows(this.tables, version).map(([key]) => key))].slice(0, limit);
  }

  async purgeSpent(version: LaneVersion): Promise<number> {
    let n = 0;
    for (const [key] of new Set(this.tables.inboxOf(version)))
      n += this.tables.removeInbox({ ...version, key }, this.tables.lane({ ...version, key })?.appliedPosition ?? 0);
    return n;
  }

  async hasUnappliedUpTo(version: LaneVersion, position: number): Promise<boolean> {
    return workRows(this.tables, version, position).length > 0;
  }

  async dropVersion(version: LaneVersion): Promise<void> {
    this.tables.removeRows(version);
    this.tables.deleteVersion(version);
  }

  async orphanRows(): Promise<{ lanes: number; inboxRows: number; versions: LaneVersion[] }> {
    const orphans = this.tables
      .versionsWithRows()
      .filter((v) => !this.tables.isLive(v))
      .sort((a, b) => (a.tenantId + '\u0000' + a.versionId < b.tenantId + '\u0000' + b.versionId ? -1 : 1));
    return {
      lanes: orphans.reduce((n, v) => n + this.tables.lanesOf(v).length, 0),
      inboxRows: orphans.reduce((n, v) => n + this.tables.inboxOf(v).length, 0),
      versions: orphans.map((v) => ({ tenantId: v.tenantId, versionId: v.versionId })),
    };
  }
}

/** LaneGauges in memory, for unit tests: the same answers as SqlLaneGauges. */
export class MemoryLaneGauges implements LaneGauges {
  constructor(private readonly tables: MemoryLaneTables) {}

  async versionGauges(): Promise<VersionGauges[]> {
    return this.tables.liveVersions().map(({ version: v, role }) => {
      const unapplied = unappliedPositions(this.tables, v);
      const oldest = unapplied[0];
      // As lag() and ProjectionReader.lag count it: just before the oldest inbox row, at most the routed position.
      const appliedPosition = oldest !== undefined && oldest - 1 < v.routedPosition ? oldest - 1 : v.routedPosition;
      const { lanes, held } = countedLanes(this.tables, v);
      const next = this.tables.events.get(v.tenantId)?.find((e) => e.position > appliedPosition);
      return {
        tenantId: v.tenantId,
        projectionId: v.projectionId,
        versionId: v.versionId,
        role,
        headPosition: this.tables.head(v.tenantId),
        routedPosition: v.routedPosition,
        appliedPosition,
        inboxRows: unapplied.length,
        heldLanes: held,
        laneCount: lanes,
        oldestUnappliedAt: next?.timestamp ?? null,
        notificationHead: this.tables.notificationHeads.get(`${v.tenantId}\u0000${v.projectionId}`) ?? 0,
      };
    });
  }
}
