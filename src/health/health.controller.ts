import { Controller, Get, HttpCode, HttpStatus, Inject, Module, OnApplicationShutdown, Res } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { SANDBOX_STATUS, SandboxStatus } from '../runtime/sandbox-check';
import { STORE, Store } from '../store/store.port';
import { Public } from '../tenancy/public.decorator';
import { HEALTH_SCHEMA, LIVENESS_SCHEMA, Readiness, READINESS_SCHEMA } from './readiness';
import { RuntimePool } from '../runtime/runtime-pool';
import { compilerReadiness } from './compiler-readiness';
import { RedisReadinessCheck, redisReadiness } from './redis-readiness';
import { runtimeReadiness } from './runtime-readiness';
import { sandboxReadiness } from './sandbox-readiness';
import { storeReadiness } from './store-readiness';
import { ApiOperation, json } from '../common/api-docs';

@Controller('health')
export class HealthController {
  constructor(private readonly readiness: Readiness) {}

  /** The contract's check: exactly `{status: 'ok'}` while the service answers. */
  @Public()
  @Get()
  @ApiOperation({
    tag: 'system',
    summary: 'The process answers (the contract)',
    responses: { 200: json('ok', HEALTH_SCHEMA) },
  })
  health() {
    return { status: 'ok' };
  }

  /** Liveness: the process serves requests; nothing it depends on is asked (a restart would not mend them). */
  @Public()
  @Get('live')
  @ApiOperation({
    tag: 'system',
    summary: 'Liveness: the process serves (orchestrators restart it otherwise)',
    responses: { 200: json('live', LIVENESS_SCHEMA) },
  })
  live() {
    return { status: 'live' };
  }

  /** 200 when every readiness check passes, else 503 naming the failing ones; the body says what each check found. */
  @Public()
  @Get('ready')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    tag: 'system',
    summary: 'Ready to serve: every readiness check passes',
    responses: { 200: json('ready', READINESS_SCHEMA), 503: json('not ready: the failing checks say why', READINESS_SCHEMA) },
  })
  async ready(@Res({ passthrough: true }) reply: FastifyReply) {
    const report = await this.readiness.report();
    if (report.status !== 'ready') reply.status(HttpStatus.SERVICE_UNAVAILABLE);
    return report;
  }
}

/** The Redis check (null without REDIS_URL); the metrics' eventstore_dependency_up asks it too. */
export const REDIS_CHECK = Symbol('REDIS_CHECK');

@Module({
  controllers: [HealthController],
  providers: [
    {
      provide: REDIS_CHECK,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => (config.redisUrl ? redisReadiness(config.redisUrl) : null),
    },
    {
      provide: Readiness,
      inject: [SANDBOX_STATUS, RuntimePool, STORE, REDIS_CHECK],
      useFactory: (sandbox: SandboxStatus, pool: RuntimePool, store: Store, redis: RedisReadinessCheck | null) =>
        new Readiness([
          sandboxReadiness(sandbox),
          runtimeReadiness(pool),
          compilerReadiness(pool),
          storeReadiness(store),
          ...(redis ? [redis] : []),
        ]),
    },
  ],
  exports: [REDIS_CHECK],
})
export class HealthModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS_CHECK) private readonly redis: RedisReadinessCheck | null) {}

  async onApplicationShutdown(): Promise<void> {
    await this.redis?.close();
  }
}
