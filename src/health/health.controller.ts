import { Controller, Get, HttpCode, HttpStatus, Res } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { Public } from '../tenancy/public.decorator';
import { Readiness } from './readiness';

@Controller('health')
export class HealthController {
  constructor(private readonly readiness: Readiness) {}

  /** The contract's check: exactly `{status: 'ok'}` while the service answers. */
  @Public()
  @Get()
  health() {
    return { status: 'ok' };
  }

  /** Liveness: the process serves requests; nothing it depends on is asked (a restart would not mend them). */
  @Public()
  @Get('live')
  live() {
    return { status: 'live' };
  }

  /** 200 when every readiness check passes, else 503 naming the failing ones; the body says what each check found. */
  @Public()
  @Get('ready')
  @HttpCode(HttpStatus.OK)
  async ready(@Res({ passthrough: true }) reply: FastifyReply) {
    const report = await this.readiness.report();
    if (report.status !== 'ready') reply.status(HttpStatus.SERVICE_UNAVAILABLE);
    return report;
  }
}
