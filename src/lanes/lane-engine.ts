import { Logger } from '@nestjs/common';
import { RuntimePool } from '../runtime/runtime-pool';
import { EventLog } from '../store/event-log.port';
import { ProjectionRepository, ProjectionVersion } from '../store/projection-repository.port';
import { LaneRunner } from './lane-runner';
import { LaneScheduler } from './lane-scheduler.port';
import { VersionRouter } from './version-router';

export interface LaneEngineOptions {
  /** How often the store is swept for work a lost wake-up left behind (and catch-up is checked). */
  sweepMs: number;
}

/**
 * Keeps every live projection version moving: a router per version (woken by appends and by the
 * sweep), lanes run by the scheduler, and the catch-up bookkeeping: a version that has applied
 * everything up to its target is marked caught up, and a pending version is then promoted to
 * active atomically (the old version is dropped).
 */
export class LaneEngine {
  private readonly logger = new Logger('LaneEngine');
  private readonly routers = new Map<string, VersionRouter>();
  private sweeper?: NodeJS.Timeout;
  private checking = false;
  /** Versions not yet caught up: only these make catch-up checks worth their queries. */
  private readonly catchingUp = new Set<string>();
  private checkScheduled = false;
  private readonly promotedListeners: ((tenantId: string, projectionId: string, versionId: string, retired: string | null) => void)[] = [];

  constructor(
    private readonly log: EventLog,
    private readonly repo: ProjectionRepository,
    private readonly runtime: Pick<RuntimePool, 'resolveKeys' | 'apply' | 'unload'>,
    private readonly scheduler: LaneScheduler,
    readonly runner: LaneRunner,
    private readonly options: LaneEngineOptions = { sweepMs: 2000 },
  ) {
    runner.onRerouted = (lane) => void this.scheduler.wake(lane).catch(() => undefined);
  }

  private readonly notifiedListeners: ((tenantId: string, projectionId: string) => void)[] = [];

  /** A lane of this instance wrote to the projection's notification log. */
  onNotified(l: (tenantId: string, projectionId: string) => void): void {
    this.notifiedListeners.push(l);
  }

  notified(tenantId: string, projectionId: string): void {
    for (const l of this.notifiedListeners) l(tenantId, projectionId);
  }

  onPromoted(l: (tenantId: string, projectionId: string, versionId: string, retired: string | null) => void): void {
    this.promotedListeners.push(l);
  }

  async start(): Promise<void> {
    await this.scheduler.start(this.runner.run);
    for (const v of await this.repo.liveVersions()) this.track(v);
    this.sweeper = setInterval(() => void this.sweep(), this.options.sweepMs);
    this.sweeper.unref();
  }

  /** A new version to keep moving (a deploy or a redeploy). */
  track(v: ProjectionVersion): void {
    if (this.routers.has(v.versionId)) return;
    if (v.caughtUpAt === null) this.catchingUp.add(v.versionId);
    const router = new VersionRouter(v, this.log, this.repo, this.runtime, this.scheduler, () => this.laneApplied());
    this.routers.set(v.versionId, router);
    router.wake();
  }

  async untrack(tenantId: string, versionId: string): Promise<void> {
    const r = this.routers.get(versionId);
    this.routers.delete(versionId);
    this.runner.forget(tenantId, versionId);
    await r?.stop();
    await this.runtime.unload(tenantId, versionId).catch(() => undefined);
  }

  /** After an append: route it now rather than at the next sweep. */
  appended(tenantId: string): void {
    for (const r of this.routers.values()) if (r.tenantId === tenantId) r.wake();
  }

  /** An operator released or skipped a held lane. */
  async wakeLane(lane: { tenantId: string; versionId: string; key: string }): Promise<void> {
    await this.scheduler.wake(lane);
  }

  /** A lane applied events: a catching-up version may now be done (checked at most every 50 ms). */
  laneApplied(): void {
    if (this.catchingUp.size === 0 || this.checkScheduled) return;
    this.checkScheduled = true;
    setTimeout(() => {
      this.checkScheduled = false;
      void this.checkCatchUp();
    }, 50).unref();
  }

  async close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    await Promise.all([...this.routers.values()].map((r) => r.stop()));
    await this.scheduler.close();
  }

  private async sweep(): Promise<void> {
    try {
      const live = await this.repo.liveVersions();
      for (const v of live) {
        this.track(v);
        this.routers.get(v.versionId)?.wake();
        const keys = await this.repo.lanesWithWork(v.tenantId, v.versionId, 1000);
        if (keys.length) await this.scheduler.wakeMany(keys.map((key) => ({ tenantId: v.tenantId, versionId: v.versionId, key })));
      }
      await this.checkCatchUp();
    } catch (e) {
      this.logger.error(`sweep failed: ${e instanceof Error ? e.stack : e}`);
    }
  }

  private async checkCatchUp(): Promise<void> {
    if (this.checking || this.catchingUp.size === 0) return;
    this.checking = true;
    try {
      // Only versions still catching up (the sweep tracks new ones): no scan of every live version.
      for (const versionId of [...this.catchingUp]) {
        const tenantId = this.routers.get(versionId)?.tenantId;
        const v = tenantId ? await this.repo.getVersion(tenantId, versionId) : null;
        if (!v || v.caughtUpAt !== null) {
          this.catchingUp.delete(versionId);
          continue;
        }
        if (v.routedPosition < v.targetPosition) continue;
        if (await this.repo.hasUnappliedUpTo(v.tenantId, v.versionId, v.targetPosition)) continue;
        await this.repo.markCaughtUp(v.tenantId, v.versionId, Date.now());
        this.catchingUp.delete(v.versionId);
        const p = await this.repo.get(v.tenantId, v.projectionId);
        if (p?.pendingVersion === v.versionId) {
          const retired = await this.repo.promote(v.tenantId, v.projectionId, v.versionId);
          if (retired) {
            await this.untrack(v.tenantId, retired);
            await this.repo.dropVersion(v.tenantId, retired);
          }
          for (const l of this.promotedListeners) l(v.tenantId, v.projectionId, v.versionId, retired);
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
