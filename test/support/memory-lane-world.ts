import { randomUUID } from 'node:crypto';
import { AppendOutcome, AppendRequest, EventLog, StoredEvent } from '../../src/store/event-log.port';
import { DeployRequest, ProjectionCatalogRepository, ProjectionRecord, ProjectionVersion } from '../../src/store/projection-catalog.port';
import { Lanes } from '../../src/store/lanes/lanes';
import { MemoryLaneTables } from '../../src/store/lanes/memory/memory-lane-tables';
import { memoryLanes } from '../../src/store/lanes/memory/memory-lanes';
import { TenantRepository } from '../../src/store/tenant-repository.port';

/** What the lane roles' conformance suite (test/store/projection-store.conformance.ts) uses of a store: a Store is one. */
export interface LaneWorld {
  readonly lanes: Lanes;
  readonly projections: Pick<
    ProjectionCatalogRepository,
    'get' | 'list' | 'deploy' | 'getVersion' | 'versionsOf' | 'liveVersions' | 'markCaughtUp' | 'promote' | 'delete' | 'forgetDropped'
  >;
  readonly events: Pick<EventLog, 'appendMany' | 'readAll'>;
  readonly tenants: Pick<TenantRepository, 'createTenant'>;
}

type CatalogPart = LaneWorld['projections'];

/**
 * The in-memory lane roles with the catalog and log they read, kept the way the SQL catalog and
 * log keep them (a drop deletes the version row and writes its tombstone; deploys go by name):
 * what unit tests and the lane roles' conformance suite run the memory adapter against.
 */
export class MemoryLaneWorld implements LaneWorld {
  readonly tables = new MemoryLaneTables();
  readonly lanes = memoryLanes(this.tables);
  private readonly names = new Map<string, ProjectionRecord>();

  readonly tenants: LaneWorld['tenants'] = { createTenant: async () => undefined };

  readonly events: LaneWorld['events'] = {
    appendMany: async (requests: AppendRequest[]): Promise<AppendOutcome[]> => {
      for (const r of requests) {
        const log = this.tables.events.get(r.tenantId) ?? [];
        this.tables.events.set(r.tenantId, log);
        let version = log.filter((e) => e.aggregateId === r.aggregateId).length;
        for (const e of r.events)
          log.push({
            position: this.tables.head(r.tenantId) + 1,
            eventId: randomUUID(),
            aggregateId: r.aggregateId,
            aggregateType: r.inferredType,
            eventType: e.eventType,
            version: ++version,
            timestamp: Date.now(),
            data: e.data,
            metadata: null,
            correlationId: null,
            causationId: null,
          });
      }
      return [];
    },
    readAll: async (tenantId: string, after: number, limit: number): Promise<StoredEvent[]> =>
      (this.tables.events.get(tenantId) ?? []).filter((e) => e.position > after).slice(0, limit),
  };

  readonly projections: CatalogPart = {
    get: async (tenantId, projectionId) => this.record(tenantId, projectionId) ?? null,
    list: async (tenantId) => [...this.names.values()].filter((p) => p.tenantId === tenantId).map((p) => ({ ...p })),
    deploy: async (d: DeployRequest) => {
      const existing = [...this.names.values()].find((p) => p.tenantId === d.tenantId && p.name === d.name);
      this.tables.putVersion({ ...d.version, routedPosition: 0, caughtUpAt: null });
      if (!existing) {
        const p: ProjectionRecord = {
          tenantId: d.tenantId,
          projectionId: d.projectionId,
          name: d.name,
          activeVersion: d.version.versionId,
          pendingVersion: null,
          createdAt: d.version.createdAt,
          notifyConfig: d.notifyConfig ?? null,
        };
        this.names.set(this.id(d.tenantId, d.projectionId), p);
        this.sync(p);
        return { ...p };
      }
      if (existing.pendingVersion) this.drop(d.tenantId, existing.pendingVersion);
      existing.pendingVersion = d.version.versionId;
      this.sync(existing);
      return { ...existing };
    },
    getVersion: async (tenantId, versionId) => this.version(tenantId, versionId),
    versionsOf: async (tenantId, ids) => ids.flatMap((id) => this.version(tenantId, id) ?? []),
    liveVersions: async () => this.tables.liveVersions().map((v) => ({ ...v.version })),
    markCaughtUp: async (tenantId, versionId, at) => {
      const v = this.version(tenantId, versionId);
      if (v) this.tables.putVersion({ ...v, caughtUpAt: at });
    },
    promote: async (tenantId, projectionId, versionId) => {
      const p = this.record(tenantId, projectionId);
      if (!p || p.pendingVersion !== versionId) return null;
      const retired = p.activeVersion;
      if (retired) this.drop(tenantId, retired);
      Object.assign(p, { activeVersion: versionId, pendingVersion: null });
      this.sync(p);
      return retired;
    },
    delete: async (tenantId, projectionId) => {
      const p = this.record(tenantId, projectionId);
      if (!p) return null;
      const dropped = [p.activeVersion, p.pendingVersion].filter((v): v is string => v !== null);
      for (const v of dropped) this.drop(tenantId, v);
      this.names.delete(this.id(tenantId, projectionId));
      this.tables.projections.delete(this.id(tenantId, projectionId));
      return dropped;
    },
    forgetDropped: async (tenantId, versionId) => void this.tables.dropped.delete(this.id(tenantId, versionId)),
  };

  private id(tenantId: string, id: string): string {
    return `${tenantId}\u0000${id}`;
  }

  private record(tenantId: string, projectionId: string): ProjectionRecord | undefined {
    return this.names.get(this.id(tenantId, projectionId));
  }

  private version(tenantId: string, versionId: string): ProjectionVersion | null {
    const v = this.tables.version({ tenantId, versionId });
    return v ? { ...v } : null;
  }

  /** The lanes read a projection's live versions from the tables. */
  private sync(p: ProjectionRecord): void {
    const { tenantId, projectionId, activeVersion, pendingVersion } = p;
    this.tables.projections.set(this.id(tenantId, projectionId), { tenantId, projectionId, activeVersion, pendingVersion });
  }

  /** A drop as the catalog writes it: the version row gone, its tombstone written; its lanes stay for the purge. */
  private drop(tenantId: string, versionId: string): void {
    this.tables.deleteVersion({ tenantId, versionId });
    this.tables.dropped.set(this.id(tenantId, versionId), { tenantId, versionId, droppedAt: Date.now() });
  }
}
