import { Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import type Redis from 'ioredis';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { EventLog } from '../store/event-log.port';
import { TenantRepository } from '../store/tenant-repository.port';
import { ConcurrencyLimiter } from './concurrency-limiter.port';
import { InProcessConcurrencyLimiter } from './in-process-concurrency-limiter';
import { InProcessRateLimiter } from './in-process-rate-limiter';
import { QuotaGate } from './quota-gate';
import { connectQuotaRedis } from './quota-redis';
import { RateLimiter } from './rate-limiter.port';
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
      provide: RateLimiter,
      inject: [QUOTA_REDIS],
      useFactory: (r: QuotaRedis): RateLimiter => (r ? new RedisRateLimiter(r.redis, { circuit: r.circuit }) : new InProcessRateLimiter()),
    },
    {
      provide: ConcurrencyLimiter,
      inject: [QUOTA_REDIS],
      useFactory: (r: QuotaRedis): ConcurrencyLimiter =>
        r ? new RedisConcurrencyLimiter(r.redis, { circuit: r.circuit }) : new InProcessConcurrencyLimiter(),
    },
    {
      provide: TenantLimitsCatalog,
      inject: [TenantRepository, APP_CONFIG],
      useFactory: (tenants: TenantRepository, c: AppConfig) =>
        new TenantLimitsCatalog(tenants, c.quotas.defaults, c.quotas.overridesCacheMs),
    },
    { provide: StoredEventsGauge, inject: [EventLog], useFactory: (events: EventLog) => new StoredEventsGauge(events) },
    TenantQuotas,
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
    private readonly rates: RateLimiter,
    private readonly slots: ConcurrencyLimiter,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.slots.close();
    await this.rates.close();
    await this.quotaRedis?.redis.quit().catch(() => this.quotaRedis?.redis.disconnect());
  }
}
