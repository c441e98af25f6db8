import { Logger } from '@nestjs/common';
import { TenantCode } from '../tenant-code/tenant-code.port';
import { LaneSweep } from '../store/lanes/lane-sweep.port';
import { ProjectionCatalogRepository, ProjectionVersion } from '../store/projection-catalog.port';

/** How long checks are coalesced: events routed or applied may finish a version's catch-up. */
const CHECK_DELAY_MS = 50;

/**
 * The catch-up bookkeeping of the versions this instance routes: a version that has applied
 * everything up to its target is marked caught up, and a pending version is then promoted to active
 * atomically (the old version is dropped with the promotion, in its transaction).
 *
 * Told by lane runs (LaneRunObserver) and routing passes (TenantRouter) that a check may pay off;
 * checked then, at most every 50 ms, and at every sweep (LaneEngine). The retired version's lanes
 * and executor go at once; its router stops at its next pass, which finds it gone (or at the next
 * sweep, which finds its tombstone): no lane write of a dropped version is kept in any case.
 */
export class VersionCatchUp {
  private readonly logger = new Logger('VersionCatchUp');
  /** Versions not yet caught up (version → tenant): only these make catch-up checks worth their queries. */
  private readonly catchingUp = new Map<string, string>();
  private checkScheduled = false;
  private checking = false;

  constructor(
    private readonly catalog: Pick<ProjectionCatalogRepository, 'getVersion' | 'markCaughtUp' | 'get' | 'promote'>,
    private readonly sweep: Pick<LaneSweep, 'hasUnappliedUpTo' | 'dropVersion'>,
    private readonly runtime: Pick<TenantCode, 'unload'>,
  ) {}

  /** A version now routed here: followed until it has caught up. */
  track(v: ProjectionVersion): void {
    if (v.caughtUpAt === null) this.catchingUp.set(v.versionId, v.tenantId);
  }

  forget(versionId: string): void {
    this.catchingUp.delete(versionId);
  }

  /** Events were routed or applied: a catching-up version may now be done (checked at most every 50 ms). */
  schedule(): void {
    if (this.catchingUp.size === 0 || this.checkScheduled) return;
    this.checkScheduled = true;
    setTimeout(() => {
      this.checkScheduled = false;
      void this.check();
    }, CHECK_DELAY_MS).unref();
  }

  async check(): Promise<void> {
    if (this.checking || this.catchingUp.size === 0) return;
    this.checking = true;
    try {
      // Only versions still catching up (the sweep tracks new ones): no scan of every live version.
      for (const [versionId, tenantId] of [...this.catchingUp]) {
        const v = await this.catalog.getVersion(tenantId, versionId);
        if (!v || v.caughtUpAt !== null) {
          this.catchingUp.delete(versionId);
          continue;
        }
        if (v.routedPosition < v.targetPosition) continue;
        if (await this.sweep.hasUnappliedUpTo({ tenantId: v.tenantId, versionId: v.versionId }, v.targetPosition)) continue;
        await this.catalog.markCaughtUp(v.tenantId, v.versionId, Date.now());
        this.catchingUp.delete(v.versionId);
        const p = await this.catalog.get(v.tenantId, v.projectionId);
        if (p?.pendingVersion === v.versionId) {
          const retired = await this.catalog.promote(v.tenantId, v.projectionId, v.versionId);
          // The old version was dropped with the promotion, in its transaction: its rows and executor go now.
          if (retired) {
            await this.sweep.dropVersion({ tenantId: v.tenantId, versionId: retired });
            await this.runtime.unload(v.tenantId, retired).catch(() => undefined);
          }
        }
      }
    } catch (e) {
      // The store may be briefly unreachable; the next sweep checks again.
      this.logger.warn(`catch-up check failed: ${e instanceof Error ? e.message : e}`);
    } finally {
      this.checking = false;
    }
  }
}
