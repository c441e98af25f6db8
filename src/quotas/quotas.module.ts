import { AppMetrics } from '../observability/metrics/app-metrics';
import { Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import type Redis from 'ioredis';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { STORE, Store } from '../store/store.port';
import { CONCURRENCY_LIMITER, ConcurrencyLimiter } from './concurrency-limiter.port';
import { InProcessConcurrencyLimiter } from './in-process-concurrency-limiter';
import { InProcessRateLimiter } from './in-process-rate-limiter';
import { QuotaGate } from './quota-gate';
import { connectQuotaRedis } from './quota-redis';
import { RATE_LIMITER, RateLimiter } from './rate-limiter.port';
import { RedisCircuit } from './redis-circuit';
import { RedisConcurrencyLimiter } from './redis-concurrency-limiter';
import { RedisRateLimiter } from './redis-rate-limiter';
import { StoredEventsGauge } from './stored-events-gauge';
import { TenantLimitsController } from './tenant-limits.controller';
import { TenantLimitsCatalog } from './tenant-limits';
import { TenantQuotas } from './tenant-quotas';

const QUOTA_REDIS = Symbol('QUOTA_REDIS');
type QuotaRedis = { redis: Redis; circuit: RedisCircuit } | null;

@Module({
  controllers: [TenantLimitsController],
  providers: [
    // Redis only when configured: then every instance shares one bucket and one slot count per tenant.
    {
      provide: QUOTA_REDIS,
      inject: [APP_CONFIG],
      useFactory: (c: AppConfig): Promise<QuotaRedis> | null => (c.redisUrl ? connectQuotaRedis(c.redisUrl) : null),
    },
    {
      provide: RATE_LIMITER,
      inject: [QUOTA_REDIS],
      useFactory: (r: QuotaRedis): RateLimiter => (r ? new RedisRateLimiter(r.redis, { circuit: r.circuit }) : new InProcessRateLimiter()),
    },
    {
      provide: CONCURRENCY_LIMITER,
      inject: [QUOTA_REDIS],
      useFactory: (r: QuotaRedis): ConcurrencyLimiter =>
        r ? new RedisConcurrencyLimiter(r.redis, { circuit: r.circuit }) : new InProcessConcurrencyLimiter(),
    },
    {
      provide: TenantLimitsCatalog,
      inject: [STORE, APP_CONFIG],
      useFactory: (s: Store, c: AppConfig) => new TenantLimitsCatalog(s.tenants, c.quotas.defaults, c.quotas.overridesCacheMs),
    },
    {
      provide: TenantQuotas,
      inject: [TenantLimitsCatalog, RATE_LIMITER, CONCURRENCY_LIMITER, STORE, AppMetrics],
      useFactory: (l: TenantLimitsCatalog, r: RateLimiter, c: ConcurrencyLimiter, s: Store, m: AppMetrics) =>
        new TenantQuotas(l, r, c, new StoredEventsGauge(s.events), m),
    },
    {
      provide: QuotaGate,
      inject: [TenantQuotas, APP_CONFIG],
      useFactory: (q: TenantQuotas, c: AppConfig) => new QuotaGate(q, c.quotas.refusalDelayMs),
    },
  ],
  exports: [TenantQuotas, QuotaGate, TenantLimitsCatalog],
})
export class QuotasModule implements OnApplicationShutdown {
  constructor(
    @Inject(QUOTA_REDIS) private readonly quotaRedis: QuotaRedis,
    @Inject(RATE_LIMITER) private readonly rates: RateLimiter,
    @Inject(CONCURRENCY_LIMITER) private readonly slots: ConcurrencyLimiter,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.slots.close();
    await this.rates.close();
    await this.quotaRedis?.redis.quit().catch(() => this.quotaRedis?.redis.disconnect());
  }
}
