import { Global, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { APPEND_COMMITTED } from '../events/append-committed.port';
import { QuotasModule } from '../quotas/quotas.module';
import { TenantQuotas } from '../quotas/tenant-quotas';
import { TenantCode } from '../tenant-code/tenant-code.port';
import { LaneInbox } from '../store/lanes/lane-inbox.port';
import { STORE, Store } from '../store/store.port';
import { AppliedSignal } from './applied-signal';
import { InProcessLaneScheduler } from './in-process-lane-scheduler';
import { LaneEngine } from './lane-engine';
import { LaneKeyCap } from './lane-key-cap';
import { LaneRunObserver } from './lane-run-observer';
import { LaneRunner } from './lane-runner';
import { LaneScheduler } from './lane-scheduler.port';
import { LaneEngineParts, LaneRunnerParts, LaneSettings } from './lane-wiring';
import { VersionCatchUp } from './version-catch-up';

/** The one real choice of the lanes: in-process, or BullMQ when REDIS_URL is set; either runs the LaneRunner it is made with. */
async function createScheduler(config: AppConfig, runner: LaneRunner): Promise<LaneScheduler> {
  const { concurrency, maxInFlightPerTenant, leaseMs } = config.lanes;
  if (!config.redisUrl) return new InProcessLaneScheduler(runner, { concurrency, maxInFlightPerTenant });
  // Loaded only when configured, so the embedded default never touches Redis code paths.
  const { BullmqLaneScheduler } = await import('./bullmq-lane-scheduler');
  // The job lock as long as the store lease: a crashed instance's running jobs are seen stalled and
  // handed to another worker about when their leases lapse.
  return new BullmqLaneScheduler(runner, { redisUrl: config.redisUrl, concurrency, maxInFlightPerTenant, lockMs: leaseMs });
}

/**
 * Projections' lanes: the scheduler, its handler (LaneRunner) and the runner's observer, the
 * engine (routers per tenant, sweep), catch-up and the applied signal. Binds the events module's
 * APPEND_COMMITTED to the engine; takes the LaneApplied port from its global binding
 * (NotificationsModule) and the store's lane roles from StoreModule, importing neither.
 */
@Global()
@Module({
  imports: [QuotasModule],
  providers: [
    AppliedSignal,
    LaneSettings,
    LaneRunObserver,
    LaneRunnerParts,
    LaneEngineParts,
    {
      provide: LaneKeyCap,
      inject: [LaneInbox, TenantQuotas],
      useFactory: (inbox: LaneInbox, quotas: TenantQuotas) => new LaneKeyCap(inbox, quotas),
    },
    {
      provide: VersionCatchUp,
      inject: [STORE, TenantCode],
      useFactory: (s: Store, pool: TenantCode) => new VersionCatchUp(s.projections, s.lanes.sweep, pool),
    },
    {
      provide: LaneRunner,
      inject: [STORE, LaneRunnerParts],
      useFactory: (s: Store, p: LaneRunnerParts) =>
        new LaneRunner(s.lanes, s.projections, p.runtime, p.settings.runner, p.observer, p.keyCap, p.metrics, p.settings.traces),
    },
    { provide: LaneScheduler, inject: [APP_CONFIG, LaneRunner], useFactory: createScheduler },
    {
      provide: LaneEngine,
      inject: [STORE, LaneEngineParts],
      useFactory: (s: Store, p: LaneEngineParts) =>
        new LaneEngine(s.events, s.projections, s.lanes, p.runtime, p.scheduler, p.runner, p.catchUp, {
          sweepMs: p.settings.sweepMs,
          keyCap: p.keyCap,
          traces: p.settings.traces,
        }),
    },
    { provide: APPEND_COMMITTED, useExisting: LaneEngine },
  ],
  exports: [LaneScheduler, AppliedSignal, LaneEngine, APPEND_COMMITTED],
})
export class LanesModule implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Lanes');

  constructor(
    private readonly engine: LaneEngine,
    private readonly scheduler: LaneScheduler,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.engine.start();
    this.logger.log(`lanes on the ${this.scheduler.kind} scheduler`);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.engine.close();
  }
}
