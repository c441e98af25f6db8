import { randomUUID } from 'node:crypto';
import * as os from 'node:os';
import { Inject, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { AppendPipeline } from '../events/append-pipeline';
import { EventsModule } from '../events/events.module';
import { AppliedSignal } from '../lanes/applied-signal';
import { InProcessLaneScheduler } from '../lanes/in-process-lane-scheduler';
import { LaneEngine } from '../lanes/lane-engine';
import { LaneKeyCap } from '../lanes/lane-key-cap';
import { DEFAULT_LANE_OPTIONS, LaneRunner } from '../lanes/lane-runner';
import { LaneScheduler } from '../lanes/lane-scheduler.port';
import { CompileQueue } from '../runtime/compile-queue';
import { QuotasModule } from '../quotas/quotas.module';
import { TenantQuotas } from '../quotas/tenant-quotas';
import { RuntimePool } from '../runtime/runtime-pool';
import { STORE, Store } from '../store/store.port';
import { AdminLanesController } from './admin-lanes.controller';
import { AdminLanesView } from './admin-lanes-view';
import { LaneOperations } from './lane-operations';
import { ProjectionCatalog } from './projection-catalog';
import { ProjectionReader } from './projection-reader';
import { ProjectionStatus } from './projection-status';
import { ProjectionsController } from './projections.controller';

export const LANE_SCHEDULER = Symbol('LANE_SCHEDULER');

/**
 * A lane run's lease in the store (several instances). A run is bounded by the Apply deadline
 * (twice: a shared call that dies is retried alone) plus a commit; an instance that dies mid-run
 * leaves its lanes stalled this long, no longer.
 */
const laneLeaseMs = (c: AppConfig): number => Math.max(15_000, 2 * c.runtime.callDeadlineMs + 5_000);

async function createScheduler(config: AppConfig): Promise<LaneScheduler> {
  const { concurrency, maxInFlightPerTenant } = config.lanes;
  if (!config.redisUrl) return new InProcessLaneScheduler({ concurrency, maxInFlightPerTenant });
  // Loaded only when configured, so the embedded default never touches Redis code paths.
  const { BullmqLaneScheduler } = await import('../lanes/bullmq-lane-scheduler');
  return new BullmqLaneScheduler({ redisUrl: config.redisUrl, concurrency, maxInFlightPerTenant });
}

@Module({
  imports: [EventsModule, QuotasModule],
  controllers: [ProjectionsController, AdminLanesController],
  providers: [
    { provide: LANE_SCHEDULER, inject: [APP_CONFIG], useFactory: createScheduler },
    { provide: AppliedSignal, useValue: new AppliedSignal() },
    {
      provide: LaneEngine,
      inject: [STORE, RuntimePool, LANE_SCHEDULER, APP_CONFIG, AppliedSignal, TenantQuotas],
      useFactory: (s: Store, pool: RuntimePool, scheduler: LaneScheduler, c: AppConfig, signal: AppliedSignal, quotas: TenantQuotas) => {
        let engine: LaneEngine | undefined;
        const lease = scheduler.kind === 'bullmq' ? { owner: `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`, ttlMs: laneLeaseMs(c) } : undefined;
        const runner = new LaneRunner(s.projections, pool, { ...DEFAULT_LANE_OPTIONS, backoffMs: c.lanes.backoffMs, lease }, (lane, _position, notifiedProjection) => {
          signal.notify(lane.versionId, lane.key);
          engine?.laneApplied();
          if (notifiedProjection) engine?.notified(lane.tenantId, notifiedProjection);
        });
        engine = new LaneEngine(s.events, s.projections, pool, scheduler, runner, { sweepMs: c.lanes.sweepMs, keyCap: new LaneKeyCap(s.projections, quotas) });
        return engine;
      },
    },
    {
      provide: ProjectionReader,
      inject: [STORE, APP_CONFIG, AppliedSignal],
      useFactory: (s: Store, c: AppConfig, signal: AppliedSignal) => new ProjectionReader(s.projections, s.events, c.lanes.readWaitMs, signal),
    },
    {
      provide: ProjectionCatalog,
      inject: [STORE, CompileQueue, LaneEngine, TenantQuotas],
      useFactory: (s: Store, q: CompileQueue, engine: LaneEngine, quotas: TenantQuotas) => new ProjectionCatalog(s.uploads, s.projections, s.events, q, engine, quotas),
    },
    {
      provide: ProjectionStatus,
      inject: [ProjectionCatalog, ProjectionReader],
      useFactory: (catalog: ProjectionCatalog, reader: ProjectionReader) =>
        new ProjectionStatus({ find: (t, id) => catalog.find(t, id), lag: (t, v) => reader.lag(t, v), webhookStatus: (t, p) => catalog.webhookStatus(t, p) }),
    },
    {
      provide: LaneOperations,
      inject: [STORE, ProjectionCatalog, LaneEngine],
      useFactory: (s: Store, catalog: ProjectionCatalog, engine: LaneEngine) =>
        new LaneOperations({ projection: (t, id) => catalog.projection(t, id), lanes: s.projections, wakeLane: (lane) => engine.wakeLane(lane) }),
    },
    {
      provide: AdminLanesView,
      inject: [STORE, LaneEngine],
      useFactory: (s: Store, engine: LaneEngine) =>
        new AdminLanesView({ liveVersions: () => s.projections.liveVersions(), orphanRows: () => s.projections.orphanRows(), routedVersions: () => engine.routedVersions() }),
    },
  ],
  exports: [ProjectionCatalog, LaneEngine],
})
export class ProjectionsModule implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Projections');

  constructor(
    private readonly engine: LaneEngine,
    private readonly pipeline: AppendPipeline,
    @Inject(LANE_SCHEDULER) private readonly scheduler: LaneScheduler,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.pipeline.onCommitted((tenantId) => this.engine.appended(tenantId));
    await this.engine.start();
    this.logger.log(`lanes on the ${this.scheduler.kind} scheduler`);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.engine.close();
  }
}
