import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { DomainError } from '../../common/domain-error';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { adminTokenMatches } from '../../tenancy/admin.guard';
import { Public } from '../../tenancy/public.decorator';
import { AppMetrics } from './app-metrics';
import { PrometheusMetrics } from './prometheus-metrics';
import { ApiOperation } from '../../common/api-docs';
import { string } from '../../common/json-schema';

/** GET /metrics: the Prometheus text format; public, or behind `Authorization: Bearer <METRICS_TOKEN>` when one is set. */
@Controller('metrics')
export class MetricsController {
  constructor(
    private readonly metrics: AppMetrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  // Public to the API-key check: the metrics token, not a tenant's key, is what guards it.
  @Public()
  @Get()
  @ApiOperation({
    tag: 'system',
    summary: 'Prometheus metrics (text format), families eventstore_… (docs/operations.md)',
    description: 'Public unless METRICS_TOKEN is set; then `Authorization: Bearer <METRICS_TOKEN>`.',
    onlyWhen: 'metrics are on (METRICS_ENABLED, the default)',
    responses: { 200: { description: 'the metrics', contentType: 'text/plain', schema: string() } },
    errors: ['UNAUTHORIZED'],
  })
  async scrape(@Res() reply: FastifyReply): Promise<void> {
    const token = this.config.metrics.token;
    if (token && !adminTokenMatches(reply.request.headers.authorization, token))
      throw new DomainError('UNAUTHORIZED', 'missing or invalid metrics token (Authorization: Bearer <METRICS_TOKEN>)');
    const registry = (this.metrics as PrometheusMetrics).registry;
    reply.header('content-type', registry.contentType).send(await registry.metrics());
  }
}
