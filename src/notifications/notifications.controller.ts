import { Body, Controller, Get, Headers, HttpCode, Inject, Logger, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, notFound, validationFailed } from '../common/domain-error';
import { DtoValidationPipe } from '../common/dto-validation.pipe';
import { errorHeaders, statusOf, toErrorBody } from '../common/error-http-mapping';
import { LongLived } from '../common/route-options';
import { isoTime } from '../common/iso-time';
import { PROJECTION_REPOSITORY } from '../projections/projections.tokens';
import { ProjectionRepository } from '../store/projection-repository.port';
import { TenantRecord } from '../store/tenant-repository.port';
import { DeliveryStatus, TENANT_SCOPE, WebhookDelivery, WebhookRepository } from '../store/webhook-repository.port';
import { CurrentTenant, TenantRequest } from '../tenancy/current-tenant.decorator';
import { KeyInQuery } from '../tenancy/public.decorator';
import { notificationView } from './notification';
import { WEBHOOK_REPOSITORY } from './notifications.tokens';
import { NotificationReader } from './notification-reader';
import { parseSettings } from './notification-settings';
import { ReplayDeliveriesDto } from './replay-deliveries.dto';
import { ResumeWebhookDto } from './resume-webhook.dto';
import { SseStream } from './sse-stream';
import { WebhookEndpoints } from './webhook-endpoints';
import { WebhookSecrets } from './webhook-secrets';

const STATUSES: DeliveryStatus[] = ['pending', 'delivered', 'dead'];

function deliveryView(d: WebhookDelivery) {
  return {
    sequence: d.sequence,
    stateKey: d.stateKey,
    status: d.status,
    attempts: d.attempts,
    nextAttemptAt: d.status === 'pending' ? isoTime(d.nextAttemptAt) : null,
    lastError: d.lastError,
    createdAt: isoTime(d.createdAt),
    updatedAt: isoTime(d.updatedAt),
  };
}

@Controller('projections')
export class NotificationsController {
  private readonly logger = new Logger('NotificationsController');
  constructor(
    private readonly reader: NotificationReader,
    private readonly sse: SseStream,
    private readonly secrets: WebhookSecrets,
    @Inject(PROJECTION_REPOSITORY) private readonly projections: ProjectionRepository,
    @Inject(WEBHOOK_REPOSITORY) private readonly webhooks: WebhookRepository,
    private readonly endpoints: WebhookEndpoints,
  ) {}

  @Get(':id/notifications')
  async notifications(
    @CurrentTenant() tenant: TenantRecord,
    @Param('id') id: string,
    @Query('afterSequence') afterSequence?: string,
    @Query('limit') limit?: string,
  ) {
    const q = this.reader.parseQuery(afterSequence, limit);
    await this.projection(tenant.tenantId, id);
    const rows = await this.reader.read(tenant.tenantId, id, q.afterSequence, q.limit);
    return { notifications: rows.map(notificationView) };
  }

  /** A plain GET of the stream path (no WebSocket upgrade): server-sent events, if asked for and enabled. */
  @Get(':id/stream')
  @KeyInQuery()
  @LongLived()
  async stream(
    @CurrentTenant() tenant: TenantRecord,
    @Param('id') id: string,
    @Query('afterSequence') afterSequence: string | undefined,
    @Headers('accept') accept: string | undefined,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    if (!(accept ?? '').includes('text/event-stream')) {
      throw new DomainError('NOT_ACCEPTABLE', 'the stream is a WebSocket upgrade, or server-sent events with Accept: text/event-stream');
    }
    // SseStream checks the cursor and the projection before it writes anything; its refusals are
    // answered here because the reply is already taken over.
    reply.hijack();
    try {
      const keyHash = (req as TenantRequest).apiKeyHash!;
      await this.sse.handle(req.raw, reply.raw, { tenantId: tenant.tenantId, keyHash }, id, { afterSequence }, lastEventId);
    } catch (e) {
      if (!(e instanceof DomainError)) this.logger.error(`SSE stream of ${id} failed: ${e instanceof Error ? e.stack : e}`);
      const err = e instanceof DomainError ? e : new DomainError('INTERNAL', 'stream failed');
      if (!reply.raw.headersSent) reply.raw.writeHead(statusOf(err.code), { 'content-type': 'application/json', ...errorHeaders(err) });
      reply.raw.end(JSON.stringify(toErrorBody(err)));
    }
  }

  @Post(':id/webhook/rotate')
  @HttpCode(200)
  async rotate(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string) {
    const p = await this.projection(tenant.tenantId, id);
    if (!parseSettings(p.notifyConfig).isolated) {
      throw new DomainError('WEBHOOK_SECRET_SHARED', `projection '${id}' signs with the tenant's shared secret: rotate it with POST /webhooks/rotate`);
    }
    const r = await this.secrets.rotate(tenant.tenantId, id);
    return { projectionId: id, webhook: { secret: r.secret, isolated: true }, rotatedAt: isoTime(r.rotatedAt) };
  }

  @Get(':id/webhook/deliveries')
  async deliveries(
    @CurrentTenant() tenant: TenantRecord,
    @Param('id') id: string,
    @Query('status') status?: string,
    @Query('afterSequence') afterSequence?: string,
    @Query('limit') limit?: string,
  ) {
    if (status !== undefined && !STATUSES.includes(status as DeliveryStatus)) throw validationFailed('status', `must be one of ${STATUSES.join(', ')}`);
    const q = this.reader.parseQuery(afterSequence, limit);
    await this.projection(tenant.tenantId, id);
    const rows = await this.webhooks.list(tenant.tenantId, id, { status: status as DeliveryStatus | undefined, afterSequence: q.afterSequence, limit: q.limit });
    return { deliveries: rows.map(deliveryView) };
  }

  /** Dead-lettered deliveries back to pending: one (`{sequence}`) or all of the projection's (`{}`). */
  @Post(':id/webhook/deliveries/replay')
  @HttpCode(200)
  async replay(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string, @Body(new DtoValidationPipe(ReplayDeliveriesDto)) body: ReplayDeliveriesDto) {
    await this.projection(tenant.tenantId, id);
    return { projectionId: id, ...(await this.endpoints.replay(tenant.tenantId, id, body.sequence ?? null, Date.now())) };
  }

  /** The endpoint's state: active or suspended (at its pendingDeliveries limit), its backlog and dead letters. */
  @Get(':id/webhook')
  async webhook(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string) {
    const p = await this.projection(tenant.tenantId, id);
    if (!parseSettings(p.notifyConfig).webhookUrl) throw notFound(`webhook of projection '${id}'`);
    return { projectionId: id, webhook: await this.endpoints.status(tenant.tenantId, id) };
  }

  /**
   * A suspended endpoint delivers again: `{}` from the oldest undelivered notification, or
   * `{afterSequence}` from a later one (to accept a gap CURSOR_EXPIRED reported).
   */
  @Post(':id/webhook/resume')
  @HttpCode(200)
  async resume(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string, @Body(new DtoValidationPipe(ResumeWebhookDto)) body: ResumeWebhookDto) {
    await this.projection(tenant.tenantId, id);
    const r = await this.endpoints.resume(tenant.tenantId, id, body.afterSequence);
    return { projectionId: id, webhook: { status: 'active' }, afterSequence: r.afterSequence, skipped: r.skipped, resumedAt: isoTime(Date.now()) };
  }

  private async projection(tenantId: string, id: string) {
    const p = await this.projections.get(tenantId, id);
    if (!p) throw notFound(`projection '${id}'`);
    return p;
  }
}

@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly secrets: WebhookSecrets) {}

  /** The tenant's shared secret (every projection without an isolated one). */
  @Post('rotate')
  @HttpCode(200)
  async rotate(@CurrentTenant() tenant: TenantRecord) {
    // A tenant without a secret yet simply gets one (no previous one to overlap with).
    const r = await this.secrets.rotate(tenant.tenantId, TENANT_SCOPE);
    return { webhook: { secret: r.secret }, rotatedAt: isoTime(r.rotatedAt) };
  }
}
