import { DomainError, notFound } from '../common/domain-error';
import { RawJson } from '../common/raw-json';
import { EventLog } from '../store/event-log.port';
import { AppliedSignal } from '../lanes/applied-signal';
import { LaneReads } from '../store/lanes/lane-reads.port';
import { LaneRecord, totalInboxDepth } from '../store/lanes/lane-records';
import { ProjectionCatalogRepository } from '../store/projection-catalog.port';
import { HeldEvent, heldEvents, Hold, holdView } from './held-event';

export interface ApplyLag {
  totalInboxDepth: number;
  heldLanes: number;
  laneCount: number;
  headPosition: number;
  appliedPosition: number;
  /** head − applied: events the version has not applied yet (a held lane keeps this above 0). */
  lagEvents: number;
  /** Age of the oldest event not yet applied; 0 when none. */
  oldestUnappliedAgeMs: number;
  /** With heldLanes > 0: the first held lane in key order, and the event it is held on. */
  firstHeld?: Hold & { key: string };
}

/** A state read: the key's state, or word that the version has not caught up (to `minPosition`, when given) within the wait. */
export type StateRead =
  | { kind: 'ready'; projectionId: string; stateKey: string; state: RawJson; updatedAt: number; appliedPosition: number }
  | { kind: 'catching_up'; projectionId: string; minPosition?: number; appliedPosition: number };

/** A page of a version's lanes, in key order after `afterKey`. */
export interface LanePage {
  afterKey: string;
  limit: number;
  heldOnly?: boolean;
}

const LAG_TIMEOUT_MS = 500;

/** Reads of projection state and lag: never from a version that has not caught up, never waiting unboundedly. */
export class ProjectionReader {
  constructor(
    private readonly catalog: ProjectionCatalogRepository,
    private readonly laneReads: LaneReads,
    private readonly log: EventLog,
    private readonly maxWaitMs: number,
    private readonly applied: AppliedSignal = new AppliedSignal(),
  ) {}

  /** `minPosition`: wait (up to the configured bound) until everything of `key` up to it is applied. */
  async state(tenantId: string, projectionId: string, key: string, minPosition?: number): Promise<StateRead> {
    let p = await this.catalog.get(tenantId, projectionId);
    if (!p || !p.activeVersion) throw notFound(`projection '${projectionId}'`);
    const deadline = Date.now() + (minPosition !== undefined ? this.maxWaitMs : 0);
    /**
     * A promotion between this read's steps drops the version it read and purges its lanes: then
     * the new active version answers (it has caught up, so it holds every state the old one did).
     * Without this, a read during a redeploy could answer 404 for a key that has a state.
     */
    const promotedMeanwhile = async (): Promise<boolean> => {
      const now = await this.catalog.get(tenantId, projectionId);
      if (!now?.activeVersion || now.activeVersion === p!.activeVersion) return false;
      p = now;
      return true;
    };
    for (let promotions = 0; ;) {
      const v = await this.catalog.getVersion(tenantId, p.activeVersion!);
      if (!v) {
        if (promotions++ < 3 && (await promotedMeanwhile())) continue;
        throw notFound(`projection '${projectionId}'`);
      }
      const reached =
        v.caughtUpAt === null
          ? false
          : minPosition === undefined
            ? true
            : await this.keyReached(tenantId, projectionId, v.versionId, key, minPosition, v.routedPosition);
      if (reached !== false) {
        const lane = reached === true ? await this.laneReads.getLane({ tenantId, versionId: v.versionId, key }) : reached;
        if ((!lane || lane.state === null) && promotions++ < 3 && (await promotedMeanwhile())) continue;
        if (!lane || lane.state === null) throw notFound(`state '${key}' of projection '${projectionId}'`);
        return {
          kind: 'ready',
          projectionId,
          stateKey: key,
          state: new RawJson(lane.state),
          updatedAt: lane.updatedAt ?? 0,
          appliedPosition: lane.appliedPosition,
        };
      }
      if (Date.now() >= deadline) {
        const applied = await this.appliedPosition(tenantId, v.versionId, v.routedPosition);
        return { kind: 'catching_up', projectionId, ...(minPosition !== undefined ? { minPosition } : {}), appliedPosition: applied };
      }
      await this.applied.wait(v.versionId, key, Math.min(20, Math.max(1, deadline - Date.now())));
    }
  }

  /** The lag summary of a version, or undefined when it cannot be had quickly (the status read must not block on it). */
  async lag(tenantId: string, versionId: string): Promise<ApplyLag | undefined> {
    const work = (async (): Promise<ApplyLag> => {
      const v = await this.catalog.getVersion(tenantId, versionId);
      if (!v) throw new DomainError('NOT_FOUND', 'version gone');
      const [l, head] = await Promise.all([this.laneReads.lag({ tenantId, versionId }), this.log.headPosition(tenantId)]);
      const firstHeld = l.heldLanes > 0 ? await this.firstHeld(tenantId, versionId) : undefined;
      const applied = l.oldestUnapplied !== null ? Math.min(l.oldestUnapplied - 1, v.routedPosition) : v.routedPosition;
      let age = 0;
      if (applied < head) {
        const [next] = await this.log.readAll(tenantId, applied, 1);
        if (next) age = Math.max(0, Date.now() - next.timestamp);
      }
      return {
        totalInboxDepth: totalInboxDepth(l.inboxDepth, head, v.routedPosition),
        heldLanes: l.heldLanes,
        laneCount: l.laneCount,
        headPosition: head,
        appliedPosition: applied,
        lagEvents: head - applied,
        oldestUnappliedAgeMs: age,
        ...(firstHeld ? { firstHeld } : {}),
      };
    })();
    const timeout = new Promise<undefined>((r) => setTimeout(() => r(undefined), LAG_TIMEOUT_MS).unref());
    return Promise.race([work.catch(() => undefined), timeout]);
  }

  /** Lanes of the projection's active version (none before it has one); NOT_FOUND for an unknown projection. */
  async lanes(tenantId: string, projectionId: string, page: LanePage): Promise<LaneRecord[]> {
    const p = await this.catalog.get(tenantId, projectionId);
    if (!p) throw notFound(`projection '${projectionId}'`);
    if (!p.activeVersion) return [];
    return this.laneReads.listLanes({ tenantId, versionId: p.activeVersion }, page);
  }

  /** The events the holds of these lanes are on, by position. */
  heldEvents(tenantId: string, lanes: LaneRecord[]): Promise<Map<number, HeldEvent>> {
    return heldEvents(this.log, tenantId, lanes);
  }

  private async firstHeld(tenantId: string, versionId: string): Promise<(Hold & { key: string }) | undefined> {
    const [lane] = await this.laneReads.listLanes({ tenantId, versionId }, { afterKey: '', limit: 1, heldOnly: true });
    if (!lane || lane.heldPosition === null) return undefined;
    const named = await this.heldEvents(tenantId, [lane]);
    return { key: lane.key, ...holdView(lane, named.get(lane.heldPosition)) };
  }

  /**
   * A lane held at or before `position` cannot reach it until retried or skipped: the read is answered at
   * once (409 PROJECTION_LANE_HELD) with the hold and its event, instead of waiting out its bound.
   */
  private async refuseIfHeld(tenantId: string, projectionId: string, lane: LaneRecord, position: number): Promise<void> {
    if (lane.heldPosition === null || lane.heldPosition > position) return;
    const named = await this.heldEvents(tenantId, [lane]);
    throw new DomainError(
      'PROJECTION_LANE_HELD',
      `the lane of key '${lane.key}' of projection '${projectionId}' is held at position ${lane.heldPosition} (before minPosition ${position}): retry or skip it`,
      { projectionId, stateKey: lane.key, minPosition: position, held: holdView(lane, named.get(lane.heldPosition)) },
    );
  }

  private async appliedPosition(tenantId: string, versionId: string, routed: number): Promise<number> {
    const oldest = await this.laneReads.oldestUnapplied({ tenantId, versionId });
    return oldest !== null ? Math.min(oldest - 1, routed) : routed;
  }

  /**
   * Everything up to `position` that belongs to `key` is applied (or it was never this key's):
   * false if not; the lane row when the row itself shows it (its state is then one to answer
   * with); true when only the inbox does (the lane may have applied since its row was read here,
   * emptying the inbox: the caller reads the row again, never answering with the older state).
   */
  private async keyReached(
    tenantId: string,
    projectionId: string,
    versionId: string,
    key: string,
    position: number,
    routed: number,
  ): Promise<LaneRecord | boolean> {
    if (routed < position) return false;
    const lane = await this.laneReads.getLane({ tenantId, versionId, key });
    if (lane && lane.appliedPosition >= position) return lane;
    if (lane) await this.refuseIfHeld(tenantId, projectionId, lane, position);
    const next = await this.laneReads.nextInboxPosition({ tenantId, versionId, key }, lane?.appliedPosition ?? 0);
    return next === null || next > position;
  }
}
