import { LaneRef } from './lane-scheduler.port';

/** One tenant's waiting lanes: a FIFO per projection version, the versions taking turns. */
interface TenantTurn {
  /** Map order is the turn order: a version served goes to the back (delete + set). */
  versions: Map<string, Set<string>>;
  queued: number;
  inFlight: number;
}

/**
 * The lanes waiting to run, served so that no tenant can starve another: tenants with a waiting
 * lane take turns (round robin, one lane per turn), and within a tenant its projection versions
 * take turns, so a redeploy rebuilding 100,000 keys does not hold up the live version's lanes
 * either. A tenant with `maxInFlightPerTenant` lanes taken and not yet released is skipped until
 * one comes back. Every operation is O(1) whatever the number of tenants or lanes: a tenant with a
 * backlog of 100,000 lanes makes another tenant's single lane wait one turn, not 100,000.
 *
 * "In flight" is the scheduler's to define: running here (in-process), or queued in Redis (BullMQ).
 */
export class FairLaneQueue {
  private readonly tenants = new Map<string, TenantTurn>();
  /** Tenants with a waiting lane and room under the cap; Set order is the turn order. */
  private readonly ready = new Set<string>();
  private readonly lanes = new Map<string, LaneRef>();

  constructor(private readonly maxInFlightPerTenant: number) {
    if (!(maxInFlightPerTenant >= 1)) throw new Error(`maxInFlightPerTenant must be at least 1, got ${maxInFlightPerTenant}`);
  }

  /** Lanes waiting (not in flight). */
  get size(): number {
    return this.lanes.size;
  }

  has(id: string): boolean {
    return this.lanes.has(id);
  }

  /** Lanes of this tenant taken and not yet released. */
  inFlight(tenantId: string): number {
    return this.tenants.get(tenantId)?.inFlight ?? 0;
  }

  /** Queues the lane at the back of its version's FIFO; false when it is already waiting. */
  push(id: string, lane: LaneRef): boolean {
    if (this.lanes.has(id)) return false;
    this.lanes.set(id, lane);
    const t = this.tenant(lane.tenantId);
    let fifo = t.versions.get(lane.versionId);
    if (!fifo) t.versions.set(lane.versionId, (fifo = new Set()));
    fifo.add(id);
    t.queued++;
    this.refresh(lane.tenantId, t);
    return true;
  }

  /** The next lane in turn, now in flight for its tenant (release it when it is no longer); undefined when no tenant may run one. */
  take(): { id: string; lane: LaneRef } | undefined {
    const tenantId: string | undefined = this.ready.values().next().value;
    if (tenantId === undefined) return undefined;
    const t = this.tenants.get(tenantId)!;
    const [versionId, fifo] = t.versions.entries().next().value!;
    const id: string = fifo.values().next().value!;
    fifo.delete(id);
    t.versions.delete(versionId);
    if (fifo.size > 0) t.versions.set(versionId, fifo); // to the back: the tenant's next turn serves another version
    const lane = this.lanes.get(id)!;
    this.lanes.delete(id);
    t.queued--;
    t.inFlight++;
    this.ready.delete(tenantId); // to the back, or out if at its cap or empty
    this.refresh(tenantId, t);
    return { id, lane };
  }

  /** A lane taken earlier is no longer in flight. */
  release(tenantId: string): void {
    const t = this.tenants.get(tenantId);
    if (!t || t.inFlight === 0) throw new Error(`release without a lane in flight for tenant ${tenantId}`);
    t.inFlight--;
    this.refresh(tenantId, t);
  }

  /** Takes a waiting lane out of the queue (not one in flight); false if it was not waiting. */
  delete(id: string): boolean {
    const lane = this.lanes.get(id);
    if (!lane) return false;
    this.lanes.delete(id);
    const t = this.tenants.get(lane.tenantId)!;
    const fifo = t.versions.get(lane.versionId)!;
    fifo.delete(id);
    if (fifo.size === 0) t.versions.delete(lane.versionId);
    t.queued--;
    this.refresh(lane.tenantId, t);
    return true;
  }

  /** Every waiting lane, in no particular order (for a scheduler closing down). */
  waiting(): IterableIterator<LaneRef> {
    return this.lanes.values();
  }

  private tenant(tenantId: string): TenantTurn {
    let t = this.tenants.get(tenantId);
    if (!t) this.tenants.set(tenantId, (t = { versions: new Map(), queued: 0, inFlight: 0 }));
    return t;
  }

  /** Keeps `ready` and `tenants` true to the counts; a tenant joining `ready` joins at the back. */
  private refresh(tenantId: string, t: TenantTurn): void {
    if (t.queued > 0 && t.inFlight < this.maxInFlightPerTenant) this.ready.add(tenantId);
    else this.ready.delete(tenantId);
    // Nothing kept for a tenant with nothing waiting or in flight: memory follows the work.
    if (t.queued === 0 && t.inFlight === 0) this.tenants.delete(tenantId);
  }
}
