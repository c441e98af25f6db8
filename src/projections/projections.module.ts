import { Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { AppliedSignal } from '../lanes/applied-signal';
import { LaneEngine } from '../lanes/lane-engine';
import { LanesModule } from '../lanes/lanes.module';
import { NotificationsModule } from '../notifications/notifications.module';
import { CompileQueue } from '../runtime/compile-queue';
import { QuotasModule } from '../quotas/quotas.module';
import { TenantQuotas } from '../quotas/tenant-quotas';
import { STORE, Store } from '../store/store.port';
import { AdminLanesController } from './admin-lanes.controller';
import { PROJECTION_NOTIFICATION_SETUP, ProjectionCatalog, ProjectionNotificationSetup } from './projection-catalog';
import { ProjectionReader } from './projection-reader';
import { ProjectionsController } from './projections.controller';
import { PROJECTION_REPOSITORY } from './projections.tokens';

/** Projection uploads, deploys, reads and operations; the lanes that run them are LanesModule's. */
@Module({
  imports: [LanesModule, NotificationsModule, QuotasModule],
  controllers: [ProjectionsController, AdminLanesController],
  providers: [
    { provide: PROJECTION_REPOSITORY, inject: [STORE], useFactory: (s: Store) => s.projections },
    {
      provide: ProjectionReader,
      inject: [STORE, APP_CONFIG, AppliedSignal],
      useFactory: (s: Store, c: AppConfig, signal: AppliedSignal) => new ProjectionReader(s.projections, s.events, c.lanes.readWaitMs, signal),
    },
    {
      provide: ProjectionCatalog,
      inject: [STORE, CompileQueue, LaneEngine, TenantQuotas, PROJECTION_NOTIFICATION_SETUP],
      useFactory: (s: Store, q: CompileQueue, engine: LaneEngine, quotas: TenantQuotas, notifications: ProjectionNotificationSetup) =>
        new ProjectionCatalog(s.uploads, s.projections, s.events, q, engine, quotas, notifications),
    },
  ],
  exports: [ProjectionCatalog, PROJECTION_REPOSITORY],
})
export class ProjectionsModule {}
