import { DynamicModule, Module } from '@nestjs/common';
import { CompilationModule } from './compilation/compilation.module';
import { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { DryRunsModule } from './dry-runs/dry-runs.module';
import { EventsModule } from './events/events.module';
import { EventWebhooksModule } from './event-webhooks/event-webhooks.module';
import { HealthModule } from './health/health.module';
import { LanesModule } from './lanes/lanes.module';
import { NotificationsModule } from './notifications/notifications.module';
import { OpenApiModule } from './openapi/openapi.module';
import { AppMetricsModule } from './observability/metrics/app-metrics.module';
import { MetricsModule } from './observability/metrics/metrics.module';
import { ProjectionsModule } from './projections/projections.module';
import { QuotasModule } from './quotas/quotas.module';
import { ReducersModule } from './reducers/reducers.module';
import { TenantCodeModule } from './tenant-code/tenant-code.module';
import { StoreModule } from './store/store.module';
import { TenancyModule } from './tenancy/tenancy.module';
import { TenantTransferModule } from './tenant-transfer/tenant-transfer.module';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        StoreModule,
        AppMetricsModule,
        TenantCodeModule,
        TenancyModule,
        QuotasModule,
        EventsModule,
        ReducersModule,
        LanesModule,
        ProjectionsModule,
        CompilationModule,
        DryRunsModule,
        NotificationsModule,
        EventWebhooksModule,
        HealthModule,
        TenantTransferModule,
        OpenApiModule,
        MetricsModule.forRoot(config),
      ],
    };
  }
}
