import { randomUUID } from 'node:crypto';
import * as os from 'node:os';
import { Inject, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { APPEND_COMMITTED } from '../events/append-committed.port';
import { NotificationsModule } from '../notifications/notifications.module';
import { AppMetrics } from '../observability/metrics/app-metrics';
import { QuotasModule } from '../quotas/quotas.module';
import { TenantQuotas } from '../quotas/tenant-quotas';
import { RuntimePool } from '../runtime/runtime-pool';
import { STORE, Store } from '../store/store.port';
import { AppliedSignal } from './applied-signal';
import { InProcessLaneScheduler } from './in-process-lane-scheduler';
import { LANE_APPLIED, LaneApplied } from './lane-applied.port';
import { LaneEngine } from './lane-engine';
import { LaneKeyCap } from './lane-key-cap';
import { DEFAULT_LANE_OPTIONS } from './lane-runner';
import { LaneScheduler } from './lane-scheduler.port';

export const LANE_SCHEDULER = Symbol('LANE_SCHEDULER');

async function createScheduler(config: AppConfig): Promise<LaneScheduler> {
  const { concurrency, maxInFlightPerTenant, leaseMs } = config.lanes;
  if (!config.redisUrl) return new InProcessLaneScheduler({ concurrency, maxInFlightPerTenant });
  // Loaded only when configured, so the embedded default never touches Redis code paths.
  const { BullmqLaneScheduler } = await import('./bullmq-lane-scheduler');
  // The job lock as long as the store lease: a crashed instance's running jobs are seen stalled and
  // handed to another worker about when their leases lapse.
  return new BullmqLaneScheduler({ redisUrl: config.redisUrl, concurrency, maxInFlightPerTenant, lockMs: leaseMs });
}

function createEngine(
  s: Store,
  pool: RuntimePool,
  scheduler: LaneScheduler,
  c: AppConfig,
  signal: AppliedSignal,
  quotas: TenantQuotas,
  notifications: LaneApplied,
  metrics: AppMetrics,
): LaneEngine {
  // BullMQ hands a lane to one worker of all instances at a time; the lease keeps that true when it
  // hands one out twice (a flush, a job seen stalled). The in-process scheduler takes no lease, even
  // with several instances on PostgreSQL (each runs the lanes of its own appends and of its sweep):
  // two of them may then run one lane side by side, and the checkpoint guard of the write keeps one
  // run's result (docs/operations.md, "Several instances"); two lease writes (two commits) per run
  // would cost every single-instance PostgreSQL service, and a crashed instance's lanes would wait
  // for the lease instead of the next sweep.
  const lease =
    scheduler.kind === 'bullmq'
      ? { owner: `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`, ttlMs: c.lanes.leaseMs }
      : undefined;
  return new LaneEngine(
    s.events,
    s.projections,
    s.lanes,
    pool,
    scheduler,
    {
      sweepMs: c.lanes.sweepMs,
      keyCap: new LaneKeyCap(s.lanes.inbox, quotas),
      runner: { ...DEFAULT_LANE_OPTIONS, backoffMs: c.lanes.backoffMs, lease },
      appliedSignal: signal,
      metrics,
    },
    notifications,
  );
}

/**
 * Projections' lanes: the scheduler, the engine (routers per tenant, runner, sweep, catch-up) and
 * the applied signal. Binds the events module's APPEND_COMMITTED to the engine; takes LANE_APPLIED
 * from notifications.
 */
@Module({
  imports: [QuotasModule, NotificationsModule],
  providers: [
    { provide: LANE_SCHEDULER, inject: [APP_CONFIG], useFactory: createScheduler },
    { provide: AppliedSignal, useValue: new AppliedSignal() },
    {
      provide: LaneEngine,
      inject: [STORE, RuntimePool, LANE_SCHEDULER, APP_CONFIG, AppliedSignal, TenantQuotas, LANE_APPLIED, AppMetrics],
      useFactory: createEngine,
    },
    { provide: APPEND_COMMITTED, useExisting: LaneEngine },
  ],
  exports: [LANE_SCHEDULER, AppliedSignal, LaneEngine, APPEND_COMMITTED],
})
export class LanesModule implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Lanes');

  constructor(
    private readonly engine: LaneEngine,
    @Inject(LANE_SCHEDULER) private readonly scheduler: LaneScheduler,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.engine.start();
    this.logger.log(`lanes on the ${this.scheduler.kind} scheduler`);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.engine.close();
  }
}
