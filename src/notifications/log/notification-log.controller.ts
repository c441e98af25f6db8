import { Controller, Get, Param, Query } from '@nestjs/common';
import { TenantRecord } from '../../store/tenant-repository.port';
import { CurrentTenant } from '../../tenancy/current-tenant.decorator';
import { NOTIFICATIONS_PAGE_SCHEMA, notificationView } from './notification';
import { NotificationLog } from './notification-log';
import { NotificationPage, NotificationPagePipe } from './notification-page';
import { RequiresScope } from '../../tenancy/scopes';
import { ApiOperation, json, NOTIFICATION_PAGE } from '../../common/api-docs';

@Controller('projections')
export class NotificationLogController {
  constructor(private readonly log: NotificationLog) {}

  @Get(':id/notifications')
  @RequiresScope('state:read')
  @ApiOperation({
    tag: 'notifications',
    summary: "Poll the projection's state changes after a cursor",
    parameters: NOTIFICATION_PAGE,
    responses: { 200: json('notifications in sequence order', NOTIFICATIONS_PAGE_SCHEMA) },
    errors: ['NOT_FOUND', 'CURSOR_EXPIRED'],
  })
  async notifications(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string, @Query(NotificationPagePipe) page: NotificationPage) {
    return { notifications: (await this.log.page(tenant.tenantId, id, page)).map(notificationView) };
  }
}
