import { Global, Module } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { STORE, Store } from '../../store/store.port';
import { AppMetrics, NO_METRICS } from './app-metrics';
import { PrometheusMetrics } from './prometheus-metrics';

/**
 * Binds the AppMetrics port once for the whole service: Prometheus counters, or the port that
 * does nothing when METRICS_ENABLED=false. Global, like the config and the store, because the
 * hops of many modules take it; it provides nothing else and imports nothing.
 */
@Global()
@Module({
  providers: [
    {
      provide: AppMetrics,
      inject: [APP_CONFIG, STORE],
      useFactory: (c: AppConfig, s: Store): AppMetrics => (c.metrics.enabled ? new PrometheusMetrics(s.kind) : NO_METRICS),
    },
  ],
  exports: [AppMetrics],
})
export class AppMetricsModule {}
