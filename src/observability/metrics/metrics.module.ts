import { DynamicModule, Module } from '@nestjs/common';
import { HealthModule } from '../../health/health.module';
import { RedisCheck } from '../../health/redis-check.port';
import { AppConfig } from '../../config/app-config';
import { NotificationsModule } from '../../notifications/notifications.module';
import { StreamLimiter } from '../../notifications/streams/stream-limiter';
import { RuntimePool } from '../../tenant-code/runtime-pool';
import { STORE, Store } from '../../store/store.port';
import { AppMetrics } from './app-metrics';
import { MetricsController } from './metrics.controller';
import { PrometheusMetrics } from './prometheus-metrics';
import { ScrapeGauges } from './scrape-gauges';

/**
 * GET /metrics and the gauges read at scrape time (projection lag from the store, executors,
 * streams). Composition: imported by AppModule only; the hops see the AppMetrics port alone.
 * With METRICS_ENABLED=false there is no route (404) and nothing is registered.
 */
@Module({})
export class MetricsModule {
  static forRoot(config: AppConfig): DynamicModule {
    if (!config.metrics.enabled) return { module: MetricsModule };
    return {
      module: MetricsModule,
      imports: [NotificationsModule, HealthModule],
      controllers: [MetricsController],
      providers: [
        {
          provide: ScrapeGauges,
          inject: [AppMetrics, STORE, RuntimePool, StreamLimiter, RedisCheck],
          useFactory: (metrics: AppMetrics, s: Store, pool: RuntimePool, streams: StreamLimiter, redis: RedisCheck | null) =>
            new ScrapeGauges((metrics as PrometheusMetrics).registry, {
              versionGauges: () => s.lanes.gauges.versionGauges(),
              pendingCompiles: () => s.uploads.countPending(),
              executors: () => pool.stats().executors,
              streams: () => streams.countByTransport(),
              ...(redis ? { dependencies: async () => ({ redis: await redis.up() }) } : {}),
            }),
        },
      ],
    };
  }
}
