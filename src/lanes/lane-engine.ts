import { Logger } from '@nestjs/common';
import { LruMap } from '../common/lru-map';
import { AppendCommitted, AppendTrace } from '../events/append-committed.port';
import { AppendTraces } from '../observability/tracing/append-traces';
import { TenantCode } from '../tenant-code/tenant-code.port';
import { EventLog } from '../store/event-log.port';
import { Lanes } from '../store/lanes/lanes';
import { ProjectionCatalogRepository, ProjectionVersion } from '../store/projection-catalog.port';
import { LaneKeyCap } from './lane-key-cap';
import { LaneRunner } from './lane-runner';
import { LaneScheduler } from './lane-scheduler.port';
import { TenantRouter } from './tenant-router';
import { TenantRouters } from './tenant-routers';
import { VersionCatchUp } from './version-catch-up';

export interface LaneEngineOptions {
  /** How often the store is swept for work a lost wake-up left behind (and catch-up is checked). */
  sweepMs: number;
  /** The tenant's keysPerProjection limit on routing and rerouting (none in unit setups). */
  keyCap?: LaneKeyCap;
  /** Tracing on: each recent append's trace by position, for its routing and lane runs (shared with the runner). */
  traces?: AppendTraces;
  /**
   * How long a dropped version's tombstone stays, its lanes and inbox purged at every sweep: longer
   * than any write that began before the drop can take to commit (default 60 s).
   */
  droppedGraceMs?: number;
}

const DEFAULT_DROPPED_GRACE_MS = 60_000;
/**
 * Sweeps in a row that skip a busy version's read for lanes with work (see sweep): while its lanes
 * run, that read (every inbox row of the version, on the event loop) repairs nothing the runs do not
 * reach, and with 200 busy versions it was a sixth of the event loop (issue 25, item 2). A wake-up
 * lost meanwhile is repaired at most this many sweeps later.
 */
const BUSY_SWEEP_SKIPS = 9;
const versionKey = (tenantId: string, versionId: string) => `${tenantId}\u0000${versionId}`;

/**
 * Keeps every live projection version moving: a router per tenant for all its versions (woken by
 * appends and by the sweep), lanes run by the scheduler, and the catch-up bookkeeping: a version that has applied
 * everything up to its target is marked caught up, and a pending version is then promoted to
 * active atomically (the old version is dropped).
 *
 * Work does not grow with the number of tenants: an append wakes only its own tenant's router,
 * and the sweep asks the store, in one statement, for the versions
 * that have something to do, so an idle tenant costs no query, timer or process of its own.
 *
 * It is the events module's AppendCommitted: an append wakes its tenant's router
 * (`routers.routerFor(tenantId).wake()`). The lanes run by the scheduler's handler, the LaneRunner
 * it was made with; the runner tells its LaneRunObserver (readers, catch-up, notifications).
 */
export class LaneEngine implements AppendCommitted {
  private readonly logger = new Logger('LaneEngine');
  /** This instance's router of each tenant with a version routed here. */
  readonly routers: TenantRouters;
  private sweeper?: NodeJS.Timeout;
  /** Versions dropped here (ids are never reused): a sweep that read one before the drop cannot track it again. */
  private readonly dropped = new LruMap<string, true>(10_000);
  /** Busy versions' skipped sweep reads in a row (tenant and version id → count). */
  private readonly skippedSweeps = new Map<string, number>();

  constructor(
    private readonly log: EventLog,
    private readonly catalog: ProjectionCatalogRepository,
    private readonly lanes: Pick<Lanes, 'inbox' | 'runs' | 'sweep'>,
    private readonly runtime: TenantCode,
    private readonly scheduler: LaneScheduler,
    /** The scheduler's handler: told here of drops (its version cache) and waited for at close. */
    private readonly runner: Pick<LaneRunner, 'forget' | 'revive' | 'close'>,
    private readonly catchUp: VersionCatchUp,
    private readonly options: LaneEngineOptions = { sweepMs: 2000 },
  ) {
    this.routers = new TenantRouters(
      { log, lanes, catalog, runtime, scheduler, keyCap: options.keyCap, traces: options.traces },
      (tenantId) => ({
        routed: () => this.catchUp.schedule(),
        gone: (versionId) => this.retired(tenantId, versionId),
      }),
    );
  }

  async start(): Promise<void> {
    await this.scheduler.start();
    for (const v of await this.catalog.liveVersions()) this.track(v);
    this.sweeper = setInterval(() => void this.sweep(), this.options.sweepMs);
    this.sweeper.unref();
  }

  /** A new version to keep moving (a deploy or a redeploy); its tenant's router; null for a dropped version. */
  track(v: ProjectionVersion): TenantRouter | null {
    if (this.dropped.get(versionKey(v.tenantId, v.versionId))) return null;
    if (this.routers.routes(v)) return this.routers.routerFor(v.tenantId)!;
    this.catchUp.track(v);
    const router = this.routers.ensure(v.tenantId);
    router.add(v);
    return router;
  }

  /**
   * A version dropped in the store (deleted, retired by a promotion, a replaced pending version;
   * the caller wrote the drop first): stops its router here, then purges its lanes and inbox rows.
   * Whatever of it still runs (a lane run, another instance) finds it gone in the store and stops.
   */
  async retire(tenantId: string, versionId: string): Promise<void> {
    await this.untrack(tenantId, versionId);
    await this.lanes.sweep.dropVersion({ tenantId, versionId });
  }

  /**
   * Version ids are never reused, except by a tenant removed and then imported again
   * (src/tenant-transfer): this instance may have marked its versions dropped, and must track them again.
   */
  revive(tenantId: string, versionIds: string[]): void {
    for (const versionId of versionIds) {
      this.dropped.delete(versionKey(tenantId, versionId));
      this.runner.revive(tenantId, versionId);
    }
  }

  /**
   * In this order: the version is marked dropped (the sweep can no longer track it again), its
   * router's pass that could still write for it has returned, and only then are the caches
   * forgotten (a lane run that read the version before cannot put it back: the runner keeps the
   * drop too). A router left with no version stops.
   */
  private async untrack(tenantId: string, versionId: string): Promise<void> {
    this.dropped.set(versionKey(tenantId, versionId), true);
    const router = this.routers.routerFor(tenantId);
    await router?.remove(versionId);
    if (router) await this.routers.stopIfEmpty(tenantId, router);
    this.catchUp.forget(versionId);
    this.skippedSweeps.delete(versionKey(tenantId, versionId));
    this.runner.forget(tenantId, versionId);
    await this.runtime.unload(tenantId, versionId).catch(() => undefined);
  }

  /** After an acknowledged append: route it now rather than at the next sweep (only this tenant's router). */
  appended(tenantId: string, position?: number, traced?: AppendTrace): void {
    if (traced) this.options.traces?.remember(tenantId, traced.fromPosition, position!, traced.traceParent);
    this.routers.routerFor(tenantId)?.wake();
  }

  /** Versions this engine routes, all tenants (for tests and diagnostics). */
  get routedVersionCount(): number {
    return this.routers.versionCount;
  }

  /** The versions this instance routes (the admin lanes view, tests). */
  routedVersions(): { tenantId: string; versionId: string }[] {
    return this.routers.routedVersions();
  }

  /** An operator released or skipped a held lane. */
  async wakeLane(lane: { tenantId: string; versionId: string; key: string }): Promise<void> {
    await this.scheduler.wake(lane);
  }

  async close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    await this.routers.stopAll();
    // The scheduler waits for the runs in flight; then their leases are released before the store
    // closes, so another instance takes these lanes at once rather than after the lease.
    await this.scheduler.close();
    await this.runner.close();
  }

  /**
   * A router found a version gone (retired or deleted, maybe by another instance): drop it, once
   * the router's pass has returned (untrack waits for the pass, which is the caller).
   */
  private retired(tenantId: string, versionId: string): void {
    setImmediate(
      () =>
        void this.retire(tenantId, versionId).catch((e) =>
          this.logger.warn(`retiring ${versionId} failed: ${e instanceof Error ? e.message : e}`),
        ),
    );
  }

  /**
   * Repairs lost wake-ups (an append routed by an instance that died, a Redis flush, a failed
   * routing): only the versions the store names as having work are visited.
   */
  private async sweep(): Promise<void> {
    try {
      const { live, dropped } = await this.lanes.sweep.sweepCandidates();
      for (const c of live) {
        const router = this.track(c.version);
        if (!router) continue; // dropped since the statement read it
        if (c.behindHead) router.wake();
        if (!c.hasInbox) continue;
        const { tenantId, versionId } = c.version;
        const vk = versionKey(tenantId, versionId);
        const skipped = this.skippedSweeps.get(vk) ?? 0;
        if ((this.scheduler.pendingOf?.(tenantId, versionId) ?? 0) > 0 && skipped < BUSY_SWEEP_SKIPS) {
          this.skippedSweeps.set(vk, skipped + 1);
          continue;
        }
        this.skippedSweeps.delete(vk);
        // One version's read at a time, the event loop free between them: a tenant with 200 busy
        // projections must not hold requests behind 200 reads in a row.
        await new Promise((r) => setImmediate(r));
        const keys = await this.lanes.sweep.lanesWithWork({ tenantId, versionId }, 1000);
        if (keys.length) await this.scheduler.wakeMany(keys.map((key) => ({ tenantId, versionId, key })));
        // Inbox rows but no lane with work: held lanes' rows, or spent rows (at or below their
        // lane's position) that an older release left; these go (a busy lane removes its own at its
        // next run, and lag never counts them). Same order of cost as lanesWithWork just paid: it
        // found nothing only after visiting every inbox row of the version.
        else {
          const spent = await this.lanes.sweep.purgeSpent({ tenantId, versionId });
          if (spent > 0) this.logger.warn(`removed ${spent} spent inbox rows of version ${versionId} (tenant ${tenantId})`);
        }
      }
      await this.purge(dropped);
      await this.catchUp.check();
    } catch (e) {
      this.logger.error(`sweep failed: ${e instanceof Error ? e.stack : e}`);
    }
  }

  /**
   * Lanes and inbox rows of dropped versions: removed at every sweep while the tombstone lasts, so
   * a write that began before the drop and committed after its purge is removed too. A version
   * dropped by another instance is stopped here as well.
   */
  private async purge(dropped: { tenantId: string; versionId: string; droppedAt: number }[]): Promise<void> {
    const grace = this.options.droppedGraceMs ?? DEFAULT_DROPPED_GRACE_MS;
    for (const d of dropped) {
      if (this.routers.routes(d) || !this.dropped.get(versionKey(d.tenantId, d.versionId))) await this.untrack(d.tenantId, d.versionId);
      await this.lanes.sweep.dropVersion({ tenantId: d.tenantId, versionId: d.versionId });
      if (Date.now() - d.droppedAt > grace) await this.catalog.forgetDropped(d.tenantId, d.versionId);
    }
  }
}
