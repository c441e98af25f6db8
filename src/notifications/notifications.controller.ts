import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../common/domain-error';
import { DtoValidationPipe } from '../common/dto-validation.pipe';
import { isoTime } from '../common/iso-time';
import { LongLived } from '../common/route-options';
import { TenantRecord } from '../store/tenant-repository.port';
import { CurrentTenant, TenantRequest } from '../tenancy/current-tenant.decorator';
import { KeyInQuery } from '../tenancy/public.decorator';
import { notificationView } from './notification';
import { NotificationLog } from './notification-log';
import { DeliveryFilter, DeliveryFilterPipe, NotificationPage, NotificationPagePipe } from './notification-page';
import { ReplayDeliveriesDto } from './replay-deliveries.dto';
import { ResumeWebhookDto } from './resume-webhook.dto';
import { SseStream } from './sse-stream';
import { WebhookDeliveries } from './webhook-deliveries';
import { WebhookSecretRotation } from './webhook-secret-rotation';
import { deliveryView } from './webhook-views';

@Controller('projections')
export class NotificationsController {
  constructor(
    private readonly log: NotificationLog,
    private readonly sse: SseStream,
    private readonly rotation: WebhookSecretRotation,
    private readonly deliveries: WebhookDeliveries,
  ) {}

  @Get(':id/notifications')
  async notifications(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string, @Query(NotificationPagePipe) page: NotificationPage) {
    return { notifications: (await this.log.page(tenant.tenantId, id, page)).map(notificationView) };
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
    // The stream writes to the raw response from here on, its refusals included.
    reply.hijack();
    const keyHash = (req as TenantRequest).apiKeyHash!;
    await this.sse.serve(req.raw, reply.raw, { tenantId: tenant.tenantId, keyHash }, id, { afterSequence }, lastEventId);
  }

  @Post(':id/webhook/rotate')
  @HttpCode(200)
  async rotate(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string) {
    const r = await this.rotation.rotateProjection(tenant.tenantId, id);
    return { projectionId: id, webhook: { secret: r.secret, isolated: true }, rotatedAt: isoTime(r.rotatedAt) };
  }

  @Get(':id/webhook/deliveries')
  async listDeliveries(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string, @Query(DeliveryFilterPipe) filter: DeliveryFilter) {
    return { deliveries: (await this.deliveries.list(tenant.tenantId, id, filter)).map(deliveryView) };
  }

  /** Dead-lettered deliveries back to pending: one (`{sequence}`) or all of the projection's (`{}`). */
  @Post(':id/webhook/deliveries/replay')
  @HttpCode(200)
  async replay(
    @CurrentTenant() tenant: TenantRecord,
    @Param('id') id: string,
    @Body(new DtoValidationPipe(ReplayDeliveriesDto)) body: ReplayDeliveriesDto,
  ) {
    return { projectionId: id, ...(await this.deliveries.replay(tenant.tenantId, id, body.sequence ?? null)) };
  }

  /** The endpoint's state: active or suspended (at its pendingDeliveries limit), its backlog and dead letters. */
  @Get(':id/webhook')
  async webhook(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string) {
    return { projectionId: id, webhook: await this.deliveries.status(tenant.tenantId, id) };
  }

  /**
   * A suspended endpoint delivers again: `{}` from the oldest undelivered notification, or
   * `{afterSequence}` from a later one (to accept a gap CURSOR_EXPIRED reported).
   */
  @Post(':id/webhook/resume')
  @HttpCode(200)
  async resume(
    @CurrentTenant() tenant: TenantRecord,
    @Param('id') id: string,
    @Body(new DtoValidationPipe(ResumeWebhookDto)) body: ResumeWebhookDto,
  ) {
    const r = await this.deliveries.resume(tenant.tenantId, id, body.afterSequence);
    return {
      projectionId: id,
      webhook: { status: 'active' },
      afterSequence: r.afterSequence,
      skipped: r.skipped,
      resumedAt: isoTime(r.resumedAt),
    };
  }
}

@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly rotation: WebhookSecretRotation) {}

  /** The tenant's shared secret (every projection without an isolated one). */
  @Post('rotate')
  @HttpCode(200)
  async rotate(@CurrentTenant() tenant: TenantRecord) {
    const r = await this.rotation.rotateTenant(tenant.tenantId);
    return { webhook: { secret: r.secret }, rotatedAt: isoTime(r.rotatedAt) };
  }
}
