import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { DtoValidationPipe } from '../common/dto-validation.pipe';
import { IntQueryPipe } from '../common/int-query.pipe';
import { TenantRecord } from '../store/tenant-repository.port';
import { CurrentTenant } from '../tenancy/current-tenant.decorator';
import { RequiresScope } from '../tenancy/scopes';
import { CreateEventWebhookDto, ReplayEventWebhookDto } from './event-webhook.dto';
import {
  deadLetterView,
  EVENT_WEBHOOK_CREATED_SCHEMA,
  EVENT_WEBHOOK_DELIVERIES_SCHEMA,
  EVENT_WEBHOOK_SCHEMA,
  EVENT_WEBHOOKS_SCHEMA,
  eventWebhookView,
} from './event-webhook-views';
import { EventWebhooks } from './event-webhooks';
import { ApiOperation, json, noContent } from '../common/api-docs';
import { integer } from '../common/json-schema';

/** Dead letters listed per page: default and most. */
export const DEAD_LETTER_PAGE = { default: 100, max: 1_000 };

/** Event webhooks: the tenant's log delivered to a URL (docs/notifications.md, "Event webhooks"). */
@Controller('event-webhooks')
export class EventWebhooksController {
  constructor(private readonly webhooks: EventWebhooks) {}

  @Post()
  @RequiresScope('deploy')
  @ApiOperation({
    tag: 'event-webhooks',
    summary: "Subscribe a URL to the tenant's events (filters, from a position)",
    description:
      'Each matching event is POSTed as `{type: "event", …the event}` in position order, signed with the tenant\'s shared secret ' +
      '(Standard Webhooks), retried on WEBHOOK_RETRY_BACKOFF_MS, then dead-lettered. `afterPosition` absent: from the head (later events only).',
    responses: { 201: json("created; `secret` is the tenant's shared webhook secret", EVENT_WEBHOOK_CREATED_SCHEMA) },
    errors: ['WEBHOOK_URL_REFUSED', 'QUOTA_EXCEEDED'],
  })
  async create(@CurrentTenant() tenant: TenantRecord, @Body(new DtoValidationPipe(CreateEventWebhookDto)) body: CreateEventWebhookDto) {
    const made = await this.webhooks.create(tenant.tenantId, body);
    return { ...eventWebhookView(made.status), secret: made.secret };
  }

  @Get()
  @RequiresScope('events:read')
  @ApiOperation({
    tag: 'event-webhooks',
    summary: "The tenant's event webhooks with their cursor and backlog",
    responses: { 200: json('every event webhook of the tenant', EVENT_WEBHOOKS_SCHEMA) },
  })
  async list(@CurrentTenant() tenant: TenantRecord) {
    return { eventWebhooks: (await this.webhooks.list(tenant.tenantId)).map(eventWebhookView) };
  }

  @Get(':id')
  @RequiresScope('events:read')
  @ApiOperation({
    tag: 'event-webhooks',
    summary: 'An event webhook: active or suspended, delivered position, pending and dead counts, last error',
    responses: { 200: json('the event webhook', EVENT_WEBHOOK_SCHEMA) },
    errors: ['NOT_FOUND'],
  })
  async get(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string) {
    return eventWebhookView(await this.webhooks.status(tenant.tenantId, id));
  }

  @Delete(':id')
  @HttpCode(204)
  @RequiresScope('deploy')
  @ApiOperation({
    tag: 'event-webhooks',
    summary: 'Delete an event webhook and its dead letters',
    responses: { 204: noContent('deleted') },
    errors: ['NOT_FOUND'],
  })
  async delete(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string): Promise<void> {
    await this.webhooks.delete(tenant.tenantId, id);
  }

  @Get(':id/deliveries')
  @RequiresScope('events:read')
  @ApiOperation({
    tag: 'event-webhooks',
    summary: "An event webhook's dead-lettered deliveries",
    parameters: {
      status: { description: 'only `dead` (live deliveries are not kept as rows)', schema: { enum: ['dead'] } },
      afterPosition: { description: 'dead letters after this position', schema: integer({ minimum: 0 }) },
      limit: { description: 'at most this many (default 100, at most 1,000)', schema: integer({ minimum: 1, maximum: 1000 }) },
    },
    responses: { 200: json('dead letters in position order', EVENT_WEBHOOK_DELIVERIES_SCHEMA) },
    errors: ['NOT_FOUND'],
  })
  async deliveries(
    @CurrentTenant() tenant: TenantRecord,
    @Param('id') id: string,
    @Query('status') status: string | undefined,
    @Query('afterPosition', new IntQueryPipe('afterPosition', 0)) afterPosition: number,
    @Query('limit', new IntQueryPipe('limit', DEAD_LETTER_PAGE.default, 1, DEAD_LETTER_PAGE.max)) limit: number,
  ) {
    return { deliveries: (await this.webhooks.deliveries(tenant.tenantId, id, status, afterPosition, limit)).map(deadLetterView) };
  }

  @Post(':id/replay')
  @HttpCode(200)
  @RequiresScope('deploy')
  @ApiOperation({
    tag: 'event-webhooks',
    summary: 'Deliver every matching event again from a position (dead letters from there on are attempted again)',
    responses: { 200: json('the event webhook, its cursor moved back', EVENT_WEBHOOK_SCHEMA) },
    errors: ['NOT_FOUND', 'WEBHOOK_SUSPENDED'],
  })
  async replay(
    @CurrentTenant() tenant: TenantRecord,
    @Param('id') id: string,
    @Body(new DtoValidationPipe(ReplayEventWebhookDto)) body: ReplayEventWebhookDto,
  ) {
    return eventWebhookView(await this.webhooks.replay(tenant.tenantId, id, body.fromPosition));
  }

  @Post(':id/resume')
  @HttpCode(200)
  @RequiresScope('deploy')
  @ApiOperation({
    tag: 'event-webhooks',
    summary: 'Resume an event webhook suspended after dead letters in a row, from its cursor',
    responses: { 200: json('active again', EVENT_WEBHOOK_SCHEMA) },
    errors: ['NOT_FOUND', 'WEBHOOK_NOT_SUSPENDED'],
  })
  async resume(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string) {
    return eventWebhookView(await this.webhooks.resume(tenant.tenantId, id));
  }
}
