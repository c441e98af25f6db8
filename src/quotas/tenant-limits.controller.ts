import { Body, Controller, Get, Param, Put } from '@nestjs/common';
import { isoTime } from '../common/iso-time';
import { AdminApi } from '../tenancy/public.decorator';
import { TENANT_LIMITS_VIEW_SCHEMA, TenantLimitsCatalog, TenantLimitsView } from './tenant-limits';
import { ApiOperation, json } from '../common/api-docs';
import { LIMIT_OVERRIDES_SCHEMA } from '../config/quota-policy';

const view = (v: TenantLimitsView) => ({ ...v, updatedAt: v.updatedAt === null ? null : isoTime(v.updatedAt) });

/** A tenant's quotas in the admin API, beside its keys (`/admin/tenants/{id}/…`), behind the admin token. */
@AdminApi()
@Controller('admin/tenants')
export class TenantLimitsController {
  constructor(private readonly catalog: TenantLimitsCatalog) {}

  @Get(':tenantId/limits')
  @ApiOperation({
    tag: 'admin',
    summary: "A tenant's quotas: what applies, its overrides, the defaults",
    responses: { 200: json('the limits', TENANT_LIMITS_VIEW_SCHEMA) },
    errors: ['NOT_FOUND'],
  })
  async get(@Param('tenantId') tenantId: string) {
    return view(await this.catalog.view(tenantId));
  }

  /** Replaces the tenant's overrides with the body's (`{}` goes back to the defaults). */
  @Put(':tenantId/limits')
  @ApiOperation({
    tag: 'admin',
    summary: "Replace a tenant's overrides ({} goes back to the defaults)",
    body: { contentType: 'application/json', schema: LIMIT_OVERRIDES_SCHEMA },
    responses: { 200: json('the limits now', TENANT_LIMITS_VIEW_SCHEMA) },
    errors: ['NOT_FOUND', 'VALIDATION_FAILED', 'MALFORMED_JSON'],
  })
  async put(@Param('tenantId') tenantId: string, @Body() body: unknown) {
    return view(await this.catalog.replace(tenantId, body));
  }
}
