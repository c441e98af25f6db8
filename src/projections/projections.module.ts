import { Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { AppliedSignal } from '../lanes/applied-signal';
import { LaneEngine } from '../lanes/lane-engine';
import { LanesModule } from '../lanes/lanes.module';
import { CompileQueue } from '../tenant-code/compiler/compile-queue';
import { QuotasModule } from '../quotas/quotas.module';
import { TenantQuotas } from '../quotas/tenant-quotas';
import { STORE, Store } from '../store/store.port';
import { AdminLanesController } from './admin-lanes.controller';
import { AdminLanesView } from './admin-lanes-view';
import { LaneOperations } from './lane-operations';
import { ProjectionCatalog } from './projection-catalog';
import { ProjectionNotificationSetup } from './projection-notification-setup.port';
import { ProjectionReader } from './projection-reader';
import { ProjectionStatus } from './projection-status';
import { ProjectionsController } from './projections.controller';

/**
 * Projection uploads, deploys, reads and operations; the lanes that run them are LanesModule's (a
 * downward import). PROJECTION_NOTIFICATION_SETUP comes from its global binding (NotificationsModule).
 */
@Module({
  imports: [LanesModule, QuotasModule],
  controllers: [ProjectionsController, AdminLanesController],
  providers: [
    {
      provide: ProjectionReader,
      inject: [STORE, APP_CONFIG, AppliedSignal],
      useFactory: (s: Store, c: AppConfig, signal: AppliedSignal) =>
        new ProjectionReader(s.projections, s.lanes.reads, s.events, c.lanes.readWaitMs, signal),
    },
    {
      provide: ProjectionCatalog,
      inject: [STORE, CompileQueue, LaneEngine, TenantQuotas, ProjectionNotificationSetup],
      useFactory: (s: Store, q: CompileQueue, engine: LaneEngine, quotas: TenantQuotas, notifications: ProjectionNotificationSetup) =>
        new ProjectionCatalog(s.uploads, s.projections, s.events, q, engine, quotas, notifications),
    },
    {
      provide: ProjectionStatus,
      inject: [ProjectionCatalog, ProjectionReader],
      useFactory: (catalog: ProjectionCatalog, reader: ProjectionReader) =>
        new ProjectionStatus({
          find: (t, id) => catalog.find(t, id),
          lag: (t, v) => reader.lag(t, v),
          webhookStatus: (t, p) => catalog.webhookStatus(t, p),
        }),
    },
    {
      provide: LaneOperations,
      inject: [STORE, ProjectionCatalog, LaneEngine],
      useFactory: (s: Store, catalog: ProjectionCatalog, engine: LaneEngine) =>
        new LaneOperations({
          projection: (t, id) => catalog.projection(t, id),
          lanes: s.lanes.holds,
          wakeLane: (lane) => engine.wakeLane(lane),
        }),
    },
    {
      provide: AdminLanesView,
      inject: [STORE, LaneEngine],
      useFactory: (s: Store, engine: LaneEngine) =>
        new AdminLanesView({
          liveVersions: () => s.projections.liveVersions(),
          orphanRows: () => s.lanes.sweep.orphanRows(),
          routedVersions: () => engine.routedVersions(),
        }),
    },
  ],
  exports: [ProjectionCatalog],
})
export class ProjectionsModule {}
