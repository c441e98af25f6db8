import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { TenantRecord } from '../store/tenant-repository.port';
import { CurrentKey, CurrentTenant } from './current-tenant.decorator';
import { AdminApi } from './public.decorator';
import { effectiveScopes } from './scope-check';
import { RequiresScope } from './scopes';
import { KeyIdentity, TenantDirectory } from './tenant-directory';
import { tenantView } from './tenant-views';

@Controller('auth')
export class WhoamiController {
  constructor(private readonly directory: TenantDirectory) {}

  /** Any valid key, whatever its scopes (the one API-key route without a scope). */
  @Get('whoami')
  whoami(@CurrentTenant() tenant: TenantRecord, @CurrentKey() key: KeyIdentity) {
    return { ...tenantView(tenant), keyId: key.keyId, scopes: effectiveScopes(key.scopes) };
  }

  /** A key made by a key: never more scopes, nor a later expiry, than its maker's (TenantDirectory.createOwnKey). */
  @Post('keys')
  @HttpCode(201)
  @RequiresScope('keys:manage')
  createKey(@CurrentTenant() tenant: TenantRecord, @CurrentKey() key: KeyIdentity, @Body() body: unknown) {
    return this.directory.createOwnKey(tenant.tenantId, key, body);
  }

  @Get('keys')
  @RequiresScope('keys:manage')
  async listKeys(@CurrentTenant() tenant: TenantRecord) {
    return { keys: await this.directory.listKeys(tenant.tenantId) };
  }

  /** Any of the tenant's keys, the calling one included (docs: README "API keys and scopes"). */
  @Delete('keys/:keyId')
  @HttpCode(204)
  @RequiresScope('keys:manage')
  async revokeKey(@CurrentTenant() tenant: TenantRecord, @Param('keyId') keyId: string): Promise<void> {
    await this.directory.revokeKey(tenant.tenantId, keyId);
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

  /** Body optional: `{scopes?, name?, expiresAt?}`; no scopes is every scope. */
  @Post(':tenantId/keys')
  @HttpCode(201)
  issueKey(@Param('tenantId') tenantId: string, @Body() body: unknown) {
    return this.directory.issueRequestedKey(tenantId, body);
  }

  @Delete(':tenantId/keys/:keyId')
  @HttpCode(204)
  async revokeKey(@Param('tenantId') tenantId: string, @Param('keyId') keyId: string): Promise<void> {
    await this.directory.revokeKey(tenantId, keyId);
  }
}
