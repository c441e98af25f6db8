import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { DtoValidationPipe } from '../../common/dto-validation.pipe';
import { TenantRecord } from '../../store/tenant-repository.port';
import { CurrentTenant } from '../../tenancy/current-tenant.decorator';
import { DeliveryFilter, DeliveryFilterPipe } from '../log/notification-page';
import { ReplayDeliveriesDto } from './replay-deliveries.dto';
import { ResumeWebhookDto } from './resume-webhook.dto';
import { WebhookDeliveries } from './webhook-deliveries';
import { WebhookSecretRotation } from './webhook-secret-rotation';
import {
  DELIVERIES_SCHEMA,
  deliveryView,
  PROJECTION_ROTATED_SCHEMA,
  projectionRotatedView,
  REPLAYED_SCHEMA,
  RESUMED_SCHEMA,
  resumedView,
  TENANT_ROTATED_SCHEMA,
  tenantRotatedView,
} from './webhook-views';
import { RequiresScope } from '../../tenancy/scopes';
import { ApiOperation, json, NOTIFICATION_PAGE } from '../../common/api-docs';
import { WEBHOOK_STATUS_SCHEMA } from './webhook-endpoints';

@Controller('projections')
export class ProjectionWebhookController {
  constructor(
    private readonly rotation: WebhookSecretRotation,
    private readonly deliveries: WebhookDeliveries,
  ) {}

  @Post(':id/webhook/rotate')
  @HttpCode(200)
  @RequiresScope('deploy')
  @ApiOperation({
    tag: 'webhooks',
    summary: "Rotate the projection's isolated webhook secret",
    responses: { 200: json('the new secret (the old one signs on for WEBHOOK_SECRET_OVERLAP_MS)', PROJECTION_ROTATED_SCHEMA) },
    errors: ['NOT_FOUND', 'WEBHOOK_SECRET_SHARED'],
  })
  async rotate(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string) {
    return projectionRotatedView(id, await this.rotation.rotateProjection(tenant.tenantId, id));
  }

  @Get(':id/webhook/deliveries')
  @RequiresScope('state:read')
  @ApiOperation({
    tag: 'webhooks',
    summary: "The projection's webhook deliveries",
    parameters: { status: { description: 'only these', schema: { enum: ['pending', 'delivered', 'dead'] } }, ...NOTIFICATION_PAGE },
    responses: { 200: json('deliveries in sequence order', DELIVERIES_SCHEMA) },
    errors: ['NOT_FOUND'],
  })
  async listDeliveries(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string, @Query(DeliveryFilterPipe) filter: DeliveryFilter) {
    return { deliveries: (await this.deliveries.list(tenant.tenantId, id, filter)).map(deliveryView) };
  }

  /** Dead-lettered deliveries back to pending: one (`{sequence}`) or all of the projection's (`{}`). */
  @Post(':id/webhook/deliveries/replay')
  @HttpCode(200)
  @RequiresScope('deploy')
  @ApiOperation({
    tag: 'webhooks',
    summary: 'Replay dead-lettered deliveries: one ({sequence}) or all ({})',
    responses: { 200: json('made pending again', REPLAYED_SCHEMA) },
    errors: ['NOT_FOUND', 'WEBHOOK_SUSPENDED', 'NOTIFICATION_EXPIRED'],
  })
  async replay(
    @CurrentTenant() tenant: TenantRecord,
    @Param('id') id: string,
    @Body(new DtoValidationPipe(ReplayDeliveriesDto)) body: ReplayDeliveriesDto,
  ) {
    return { projectionId: id, ...(await this.deliveries.replay(tenant.tenantId, id, body.sequence ?? null)) };
  }

  /** The endpoint's state: active or suspended (at its pendingDeliveries limit), its backlog and dead letters. */
  @Get(':id/webhook')
  @RequiresScope('state:read')
  @ApiOperation({
    tag: 'webhooks',
    summary: "The webhook endpoint's status: active, or suspended at its pendingDeliveries limit",
    responses: { 200: json('the status', WEBHOOK_STATUS_SCHEMA) },
    errors: ['NOT_FOUND'],
  })
  async webhook(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string) {
    return { projectionId: id, webhook: await this.deliveries.status(tenant.tenantId, id) };
  }

  /**
   * A suspended endpoint delivers again: `{}` from the oldest undelivered notification, or
   * `{afterSequence}` from a later one (to accept a gap CURSOR_EXPIRED reported).
   */
  @Post(':id/webhook/resume')
  @HttpCode(200)
  @RequiresScope('deploy')
  @ApiOperation({
    tag: 'webhooks',
    summary: 'Resume a suspended webhook endpoint',
    responses: { 200: json('delivering again', RESUMED_SCHEMA) },
    errors: ['NOT_FOUND', 'WEBHOOK_NOT_SUSPENDED', 'CURSOR_EXPIRED'],
  })
  async resume(
    @CurrentTenant() tenant: TenantRecord,
    @Param('id') id: string,
    @Body(new DtoValidationPipe(ResumeWebhookDto)) body: ResumeWebhookDto,
  ) {
    return resumedView(id, await this.deliveries.resume(tenant.tenantId, id, body.afterSequence));
  }
}

@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly rotation: WebhookSecretRotation) {}

  /** The tenant's shared secret (every projection without an isolated one). */
  @Post('rotate')
  @HttpCode(200)
  @RequiresScope('deploy')
  @ApiOperation({
    tag: 'webhooks',
    summary: "Rotate the tenant's shared webhook secret (every projection without an isolated one)",
    responses: { 200: json('the new secret', TENANT_ROTATED_SCHEMA) },
  })
  async rotate(@CurrentTenant() tenant: TenantRecord) {
    return tenantRotatedView(await this.rotation.rotateTenant(tenant.tenantId));
  }
}
