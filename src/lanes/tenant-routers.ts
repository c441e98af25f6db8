import { AppendTraces } from '../observability/tracing/append-traces';
import { TenantCode } from '../tenant-code/tenant-code.port';
import { EventLog } from '../store/event-log.port';
import { Lanes } from '../store/lanes/lanes';
import { ProjectionCatalogRepository, ProjectionVersion } from '../store/projection-catalog.port';
import { LaneKeyCap } from './lane-key-cap';
import { LaneScheduler } from './lane-scheduler.port';
import { TenantRouter, TenantRouterEvents } from './tenant-router';

/** What every tenant's router is made with. */
export interface TenantRouterParts {
  log: EventLog;
  lanes: Pick<Lanes, 'inbox' | 'runs'>;
  catalog: Pick<ProjectionCatalogRepository, 'versionsOf'>;
  runtime: Pick<TenantCode, 'resolveKeys'>;
  scheduler: LaneScheduler;
  keyCap?: LaneKeyCap;
  traces?: AppendTraces;
}

/**
 * This instance's routers, one per tenant with a version routed here, made when its first version
 * is tracked and dropped with its last: an append reaches its tenant's router by
 * `routerFor(tenantId)`, and no other tenant's.
 */
export class TenantRouters {
  private readonly routers = new Map<string, TenantRouter>();

  constructor(
    private readonly parts: TenantRouterParts,
    /** What a router tells (LaneEngine: catch-up checks, a version found gone). */
    private readonly events: (tenantId: string) => TenantRouterEvents,
  ) {}

  routerFor(tenantId: string): TenantRouter | undefined {
    return this.routers.get(tenantId);
  }

  /** The tenant's router, made if it has none. */
  ensure(tenantId: string): TenantRouter {
    let router = this.routers.get(tenantId);
    if (!router) {
      const { log, lanes, catalog, runtime, scheduler, keyCap, traces } = this.parts;
      router = new TenantRouter(tenantId, log, lanes, catalog, runtime, scheduler, this.events(tenantId), keyCap, traces);
      this.routers.set(tenantId, router);
    }
    return router;
  }

  /** Stops the tenant's router if it routes nothing any more (and is still the one registered). */
  async stopIfEmpty(tenantId: string, router: TenantRouter): Promise<void> {
    if (router.size === 0 && this.routers.get(tenantId) === router) {
      this.routers.delete(tenantId);
      await router.stop();
    }
  }

  /** Whether the tenant's router routes the version. */
  routes(v: Pick<ProjectionVersion, 'tenantId' | 'versionId'>): boolean {
    return this.routers.get(v.tenantId)?.has(v.versionId) ?? false;
  }

  get versionCount(): number {
    let n = 0;
    for (const r of this.routers.values()) n += r.size;
    return n;
  }

  routedVersions(): { tenantId: string; versionId: string }[] {
    return [...this.routers].flatMap(([tenantId, r]) => r.versionIds.map((versionId) => ({ tenantId, versionId })));
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.routers.values()].map((r) => r.stop()));
  }
}
