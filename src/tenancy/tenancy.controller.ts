import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { TenantRecord } from '../store/tenant-repository.port';
import { CurrentKey, CurrentTenant } from './current-tenant.decorator';
import { AdminApi } from './public.decorator';
import { effectiveScopes } from './scope-check';
import { RequiresScope } from './scopes';
import { KeyIdentity, TenantDirectory } from './tenant-directory';
import {
  CREATE_TENANT_BODY_SCHEMA,
  ISSUED_KEY_SCHEMA,
  TENANT_CREATED_SCHEMA,
  TENANTS_SCHEMA,
  tenantView,
  WHOAMI_SCHEMA,
} from './tenant-views';
import { ApiOperation, json, noContent } from '../common/api-docs';
import { CREATE_KEY_BODY_SCHEMA, ISSUE_KEY_BODY_SCHEMA, KEYS_SCHEMA, KEY_CREATED_SCHEMA } from './key-spec';

@Controller('auth')
export class WhoamiController {
  constructor(private readonly directory: TenantDirectory) {}

  /** Any valid key, whatever its scopes (the one API-key route without a scope). */
  @Get('whoami')
  @ApiOperation({
    tag: 'system',
    summary: "The API key's tenant, the key's id and its scopes (any valid key, whatever its scopes)",
    responses: { 200: json('the tenant and the key', WHOAMI_SCHEMA) },
  })
  whoami(@CurrentTenant() tenant: TenantRecord, @CurrentKey() key: KeyIdentity) {
    return { ...tenantView(tenant), keyId: key.keyId, scopes: effectiveScopes(key.scopes) };
  }

  /** A key made by a key: never more scopes, nor a later expiry, than its maker's (TenantDirectory.createOwnKey). */
  @Post('keys')
  @HttpCode(201)
  @RequiresScope('keys:manage')
  @ApiOperation({
    tag: 'keys',
    summary: 'Make an API key of this tenant (never with a scope, or a later expiry, than the calling key has)',
    body: { contentType: 'application/json', schema: CREATE_KEY_BODY_SCHEMA },
    responses: { 201: json('made; the key is shown once', KEY_CREATED_SCHEMA) },
    errors: ['VALIDATION_FAILED', 'MALFORMED_JSON', 'FORBIDDEN', 'QUOTA_EXCEEDED'],
  })
  createKey(@CurrentTenant() tenant: TenantRecord, @CurrentKey() key: KeyIdentity, @Body() body: unknown) {
    return this.directory.createOwnKey(tenant.tenantId, key, body);
  }

  @Get('keys')
  @RequiresScope('keys:manage')
  @ApiOperation({
    tag: 'keys',
    summary: "The tenant's keys not revoked (no secrets)",
    responses: { 200: json('the keys, oldest first', KEYS_SCHEMA) },
  })
  async listKeys(@CurrentTenant() tenant: TenantRecord) {
    return { keys: await this.directory.listKeys(tenant.tenantId) };
  }

  /** Any of the tenant's keys, the calling one included (docs: README "API keys and scopes"). */
  @Delete('keys/:keyId')
  @HttpCode(204)
  @RequiresScope('keys:manage')
  @ApiOperation({
    tag: 'keys',
    summary: 'Revoke a key of this tenant (the calling one included)',
    responses: { 204: noContent('revoked') },
    errors: ['NOT_FOUND'],
  })
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
  @ApiOperation({
    tag: 'admin',
    summary: 'Create a tenant and its first API key',
    body: { contentType: 'application/json', schema: CREATE_TENANT_BODY_SCHEMA },
    responses: { 201: json('created; the key is shown once', TENANT_CREATED_SCHEMA) },
    errors: ['VALIDATION_FAILED', 'MALFORMED_JSON'],
  })
  async create(@Body() body: { name?: unknown }) {
    const { tenant, apiKey, keyId } = await this.directory.createTenant(body?.name as string);
    return { ...tenantView(tenant), keyId, apiKey };
  }

  @Get()
  @ApiOperation({
    tag: 'admin',
    summary: 'Every tenant',
    responses: { 200: json('the tenants', TENANTS_SCHEMA) },
  })
  async list() {
    return { tenants: (await this.directory.listTenants()).map(tenantView) };
  }

  /** Body optional: `{scopes?, name?, expiresAt?}`; no scopes is every scope. */
  @Post(':tenantId/keys')
  @HttpCode(201)
  @ApiOperation({
    tag: 'admin',
    summary: 'Issue another API key for a tenant, with scopes, a name and an expiry if given (no body: every scope)',
    body: { contentType: 'application/json', schema: ISSUE_KEY_BODY_SCHEMA, description: 'optional' },
    responses: { 201: json('issued; shown once', ISSUED_KEY_SCHEMA) },
    errors: ['NOT_FOUND', 'VALIDATION_FAILED', 'MALFORMED_JSON'],
  })
  issueKey(@Param('tenantId') tenantId: string, @Body() body: unknown) {
    return this.directory.issueRequestedKey(tenantId, body);
  }

  @Delete(':tenantId/keys/:keyId')
  @HttpCode(204)
  @ApiOperation({
    tag: 'admin',
    summary: 'Revoke an API key',
    responses: { 204: noContent('revoked') },
    errors: ['NOT_FOUND'],
  })
  async revokeKey(@Param('tenantId') tenantId: string, @Param('keyId') keyId: string): Promise<void> {
    await this.directory.revokeKey(tenantId, keyId);
  }
}
