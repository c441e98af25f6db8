import { Controller, Get, Param, Query } from '@nestjs/common';
import { TenantRecord } from '../../store/tenant-repository.port';
import { CurrentTenant } from '../../tenancy/current-tenant.decorator';
import { notificationView } from './notification';
import { NotificationLog } from './notification-log';
import { NotificationPage, NotificationPagePipe } from './notification-page';
import { RequiresScope } from '../../tenancy/scopes';

@Controller('projections')
export class NotificationLogController {
  constructor(private readonly log: NotificationLog) {}

  @Get(':id/notifications')
  @RequiresScope('state:read')
  async notifications(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string, @Query(NotificationPagePipe) page: NotificationPage) {
    return { notifications: (await this.log.page(tenant.tenantId, id, page)).map(notificationView) };
  }
}
