import { Controller, Get, HttpCode, HttpStatus, Res } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { Public } from '../tenancy/public.decorator';
import { HEALTH_SCHEMA, LIVENESS_SCHEMA, Readiness, READINESS_SCHEMA } from './readiness';
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
