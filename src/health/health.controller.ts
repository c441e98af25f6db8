import { Controller, Get, HttpCode, HttpStatus, Module, Res } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { SANDBOX_STATUS, SandboxStatus } from '../runtime/sandbox-check';
import { Public } from '../tenancy/public.decorator';
import { Readiness } from './readiness';
import { RuntimePool } from '../runtime/runtime-pool';
import { runtimeReadiness } from './runtime-readiness';
import { sandboxReadiness } from './sandbox-readiness';

@Controller('health')
export class HealthController {
  constructor(private readonly readiness: Readiness) {}

  @Public()
  @Get()
  health() {
    return { status: 'ok' };
  }

  /** 200 when every readiness check passes, else 503; the body says what each check found. */
  @Public()
  @Get('ready')
  @HttpCode(HttpStatus.OK)
  async ready(@Res({ passthrough: true }) reply: FastifyReply) {
    const report = await this.readiness.report();
    if (report.status !== 'ready') reply.status(HttpStatus.SERVICE_UNAVAILABLE);
    return report;
  }
}

@Module({
  controllers: [HealthController],
  providers: [
    {
      provide: Readiness,
      inject: [SANDBOX_STATUS, RuntimePool],
      useFactory: (sandbox: SandboxStatus, pool: RuntimePool) => new Readiness([sandboxReadiness(sandbox), runtimeReadiness(pool)]),
    },
  ],
})
export class HealthModule {}
