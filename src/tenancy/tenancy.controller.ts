import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { TenantRecord } from '../store/tenant-repository.port';
import { CurrentTenant } from './current-tenant.decorator';
import { AdminApi } from './public.decorator';
import { TenantDirectory } from './tenant-directory';
import { tenantView } from './tenant-views';

@Controller('auth')
export class WhoamiController {
  @Get('whoami')
  whoami(@CurrentTenant() tenant: TenantRecord) {
    return tenantView(tenant);
  }
}

@AdminApi()
@Controller('admin/tenants')
export class AdminTenantsController {
  constructor(private readonly directory: TenantDirectory) {}

  @Post()
  @HttpCode(201)
  async create(@Body() body: { name?: unknown }) {
    const { tenant, apiKey, keyId } = await this.directory.createTenant(body?.name as string);
    return { ...tenantView(tenant), keyId, apiKey };
  }

  @Get()
  async list() {
    return { tenants: (await this.directory.listTenants()).map(tenantView) };
  }

  @Post(':tenantId/keys')
  @HttpCode(201)
  issueKey(@Param('tenantId') tenantId: string) {
    return this.directory.issueKey(tenantId);
  }

  @Delete(':tenantId/keys/:keyId')
  @HttpCode(204)
  async revokeKey(@Param('tenantId') tenantId: string, @Param('keyId') keyId: string): Promise<void> {
    await this.directory.revokeKey(tenantId, keyId);
  }
}
