import { Body, Controller, Get, Param, Put } from '@nestjs/common';
import { isoTime } from '../common/iso-time';
import { AdminApi } from '../tenancy/public.decorator';
import { TenantLimitsCatalog, TenantLimitsView } from './tenant-limits';

const view = (v: TenantLimitsView) => ({ ...v, updatedAt: v.updatedAt === null ? null : isoTime(v.updatedAt) });

/** A tenant's quotas in the admin API, beside its keys (`/admin/tenants/{id}/…`), behind the admin token. */
@AdminApi()
@Controller('admin/tenants')
export class TenantLimitsController {
  constructor(private readonly catalog: TenantLimitsCatalog) {}

  @Get(':tenantId/limits')
  async get(@Param('tenantId') tenantId: string) {
    return view(await this.catalog.view(tenantId));
  }

  /** Replaces the tenant's overrides with the body's (`{}` goes back to the defaults). */
  @Put(':tenantId/limits')
  async put(@Param('tenantId') tenantId: string, @Body() body: unknown) {
    return view(await this.catalog.replace(tenantId, body));
  }
}
