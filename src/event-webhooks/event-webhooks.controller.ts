import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { DtoValidationPipe } from '../common/dto-validation.pipe';
import { IntQueryPipe } from '../common/int-query.pipe';
import { TenantRecord } from '../store/tenant-repository.port';
import { CurrentTenant } from '../tenancy/current-tenant.decorator';
import { RequiresScope } from '../tenancy/scopes';
import { CreateEventWebhookDto, ReplayEventWebhookDto } from './event-webhook.dto';
import { deadLetterView, eventWebhookView } from './event-webhook-views';
import { EventWebhooks } from './event-webhooks';

/** Dead letters listed per page: default and most. */
export const DEAD_LETTER_PAGE = { default: 100, max: 1_000 };

/** Event webhooks: the tenant's log delivered to a URL (docs/notifications.md, "Event webhooks"). */
@Controller('event-webhooks')
export class EventWebhooksController {
  constructor(private readonly webhooks: EventWebhooks) {}

  @Post()
  @RequiresScope('deploy')
  async create(@CurrentTenant() tenant: TenantRecord, @Body(new DtoValidationPipe(CreateEventWebhookDto)) body: CreateEventWebhookDto) {
    const made = await this.webhooks.create(tenant.tenantId, body);
    return { ...eventWebhookView(made.status), secret: made.secret };
  }

  @Get()
  @RequiresScope('events:read')
  async list(@CurrentTenant() tenant: TenantRecord) {
    return { eventWebhooks: (await this.webhooks.list(tenant.tenantId)).map(eventWebhookView) };
  }

  @Get(':id')
  @RequiresScope('events:read')
  async get(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string) {
    return eventWebhookView(await this.webhooks.status(tenant.tenantId, id));
  }

  @Delete(':id')
  @HttpCode(204)
  @RequiresScope('deploy')
  async delete(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string): Promise<void> {
    await this.webhooks.delete(tenant.tenantId, id);
  }

  @Get(':id/deliveries')
  @RequiresScope('events:read')
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
  async resume(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string) {
    return eventWebhookView(await this.webhooks.resume(tenant.tenantId, id));
  }
}
