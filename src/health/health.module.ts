import { Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { TenantCodeReadiness } from '../tenant-code/tenant-code-readiness.port';
import { SANDBOX_STATUS, SandboxStatus } from '../tenant-code/host/sandbox-check';
import { STORE, Store } from '../store/store.port';
import { compilerReadiness } from './compiler-readiness';
import { HealthController } from './health.controller';
import { Readiness } from './readiness';
import { RedisCheck } from './redis-check.port';
import { redisReadiness } from './redis-readiness';
import { runtimeReadiness } from './runtime-readiness';
import { sandboxReadiness } from './sandbox-readiness';
import { storeReadiness } from './store-readiness';

/** The service's readiness: one section per check, in this order (GET /health/ready). */
@Injectable()
export class ServiceReadiness extends Readiness {
  constructor(
    @Inject(SANDBOX_STATUS) sandbox: SandboxStatus,
    pool: TenantCodeReadiness,
    @Inject(STORE) store: Store,
    // Nullable, so named: a `RedisCheck | null` parameter has no type for Nest to inject by.
    @Inject(RedisCheck) redis: RedisCheck | null,
  ) {
    super([sandboxReadiness(sandbox), runtimeReadiness(pool), compilerReadiness(pool), storeReadiness(store), ...(redis ? [redis] : [])]);
  }
}

@Module({
  controllers: [HealthController],
  providers: [
    // Redis or not: checked only when REDIS_URL is set.
    {
      provide: RedisCheck,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): RedisCheck | null => (config.redisUrl ? redisReadiness(config.redisUrl) : null),
    },
    { provide: Readiness, useClass: ServiceReadiness },
  ],
  exports: [RedisCheck],
})
export class HealthModule implements OnApplicationShutdown {
  constructor(@Inject(RedisCheck) private readonly redis: RedisCheck | null) {}

  async onApplicationShutdown(): Promise<void> {
    await this.redis?.close();
  }
}
