import { Logger } from '@nestjs/common';
import { Gauge, Registry } from 'prom-client';
import { totalInboxDepth, VersionGauges } from '../../store/lanes/lane-records';

/** Where the scrape-time gauges read from (the store, the runtime pool, the stream limiter). */
export interface ScrapeSources {
  /** Every live projection version's figures: ONE store statement. */
  versionGauges(): Promise<VersionGauges[]>;
  /** Uploads waiting to compile, all tenants. */
  pendingCompiles(): Promise<number>;
  /** Executors of this instance: whether each has a process, and how many assemblies it has loaded. */
  executors(): { pid?: number; loaded: number }[];
  /** Open streams of this instance by transport. */
  streams(): { websocket: number; sse: number };
  /** Dependencies whose loss degrades this instance without stopping it, each asked now: name → up (e.g. redis). */
  dependencies?(): Promise<Record<string, boolean>>;
}

/** What the store said at one scrape, kept for STORE_CACHE_MS. */
interface StoreReading {
  versions: VersionGauges[];
  pendingCompiles: number;
}

/** Scrapes within this share one store reading: Prometheus servers scraping together, or a burst of scrapes, cost one query. */
export const STORE_CACHE_MS = 1_000;

/** The value of each per-version gauge, from one row (pure: unit-tested). */
export function versionSamples(g: VersionGauges, nowMs: number) {
  return {
    labels: { tenant: g.tenantId, projection: g.projectionId, version: g.role },
    lagEvents: Math.max(0, g.headPosition - g.appliedPosition),
    oldestUnappliedAgeSeconds: g.oldestUnappliedAt === null ? 0 : Math.max(0, nowMs - g.oldestUnappliedAt) / 1000,
    inboxDepth: totalInboxDepth(g.inboxRows, g.headPosition, g.routedPosition),
    heldLanes: g.heldLanes,
    laneCount: g.laneCount,
  };
}

/**
 * The gauges read from state when /metrics is scraped (prom-client collect callbacks), on the
 * metrics' own registry. The store is asked once per scrape at most — one statement for every
 * projection version, one count of pending compiles — and the answer is shared for a second, so a
 * scrape costs the same with 10 or 10,000 projections (in round trips; the statement reads the
 * lane and inbox rows once). A failed read keeps the last values and logs why.
 */
export class ScrapeGauges {
  private readonly logger = new Logger('Metrics');
  private reading?: { at: number; value: Promise<StoreReading> };
  private last: StoreReading = { versions: [], pendingCompiles: 0 };

  constructor(
    registry: Registry,
    private readonly sources: ScrapeSources,
    private readonly now: () => number = Date.now,
  ) {
    const perVersion = ['tenant', 'projection', 'version'] as const;
    const versionGauge = (name: string, help: string, pick: (s: ReturnType<typeof versionSamples>) => number) => {
      const gauge: Gauge<(typeof perVersion)[number]> = new Gauge({
        name,
        help,
        labelNames: perVersion,
        registers: [registry],
        collect: async () => {
          const { versions } = await this.store();
          const at = this.now();
          gauge.reset();
          for (const g of versions) {
            const s = versionSamples(g, at);
            gauge.set(s.labels, pick(s));
          }
        },
      });
    };
    versionGauge(
      'eventstore_projection_lag_events',
      'Events of the tenant not yet applied by the projection version (head - applied)',
      (s) => s.lagEvents,
    );
    versionGauge(
      'eventstore_projection_oldest_unapplied_age_seconds',
      'Age of the oldest event the projection version has not applied; 0 when caught up',
      (s) => s.oldestUnappliedAgeSeconds,
    );
    versionGauge(
      'eventstore_projection_inbox_depth',
      'Events waiting for the projection version: in lane inboxes plus not yet routed',
      (s) => s.inboxDepth,
    );
    versionGauge('eventstore_projection_held_lanes', 'Lanes of the projection version held on a failing event', (s) => s.heldLanes);
    versionGauge('eventstore_projection_lanes', 'Lanes (state keys) of the projection version', (s) => s.laneCount);
    const heads: Gauge<'tenant' | 'projection'> = new Gauge({
      name: 'eventstore_notification_log_head',
      help: "The last sequence in the projection's notification log",
      labelNames: ['tenant', 'projection'] as const,
      registers: [registry],
      collect: async () => {
        const { versions } = await this.store();
        heads.reset();
        for (const g of versions) heads.set({ tenant: g.tenantId, projection: g.projectionId }, g.notificationHead);
      },
    });
    const compileQueue: Gauge = new Gauge({
      name: 'eventstore_compile_queue_depth',
      help: 'Uploads waiting to compile, all tenants',
      registers: [registry],
      collect: async () => compileQueue.set((await this.store()).pendingCompiles),
    });
    new Gauge({
      name: 'eventstore_executor_processes',
      help: 'Executor host processes running in this instance',
      registers: [registry],
      collect() {
        this.set(sources.executors().filter((e) => e.pid !== undefined).length);
      },
    });
    new Gauge({
      name: 'eventstore_executor_loaded_assemblies',
      help: "Tenant assemblies loaded in this instance's executor processes",
      registers: [registry],
      collect() {
        this.set(sources.executors().reduce((n, e) => n + e.loaded, 0));
      },
    });
    const dependencies = sources.dependencies;
    if (dependencies)
      new Gauge({
        name: 'eventstore_dependency_up',
        help: 'Whether a dependency answers this instance (1) or not (0): redis, when REDIS_URL is set; its loss degrades, see /health/ready',
        labelNames: ['dependency'] as const,
        registers: [registry],
        async collect() {
          for (const [dependency, up] of Object.entries(await dependencies())) this.set({ dependency }, up ? 1 : 0);
        },
      });
    new Gauge({
      name: 'eventstore_stream_connections',
      help: 'Open notification streams of this instance, by transport',
      labelNames: ['transport'] as const,
      registers: [registry],
      collect() {
        const open = sources.streams();
        this.set({ transport: 'websocket' }, open.websocket);
        this.set({ transport: 'sse' }, open.sse);
      },
    });
  }

  /** The store's answer of the last second, or a new one. */
  private store(): Promise<StoreReading> {
    const now = this.now();
    if (this.reading && now - this.reading.at < STORE_CACHE_MS) return this.reading.value;
    const value = Promise.all([this.sources.versionGauges(), this.sources.pendingCompiles()]).then(
      ([versions, pendingCompiles]) => (this.last = { versions, pendingCompiles }),
      (e) => {
        this.logger.warn(`metrics: cannot read projection lag from the store: ${e instanceof Error ? e.message : e}`);
        return this.last;
      },
    );
    this.reading = { at: now, value };
    return value;
  }
}
