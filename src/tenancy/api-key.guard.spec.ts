import { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiKeyRecord, TenantRepository } from '../store/tenant-repository.port';
import { ApiKeyGuard } from './api-key.guard';
import { hashApiKey } from './api-key';
import { TenantRequest } from './current-tenant.decorator';
import { RequiresScope } from './scopes';
import { TenantDirectory } from './tenant-directory';

class Routes {
  @RequiresScope('deploy')
  deploy() {}

  whoami() {}
}

/** The guard's own authentication: what an app built without createApp (no onRequest hook) relies on. */
describe('ApiKeyGuard without the onRequest hook', () => {
  const keys: ApiKeyRecord[] = [
    { keyId: 'key_all', tenantId: 't', keyHash: hashApiKey('esk_all'), createdAt: 0, revokedAt: null, scopes: null },
    { keyId: 'key_read', tenantId: 't', keyHash: hashApiKey('esk_read'), createdAt: 0, revokedAt: null, scopes: ['events:read'] },
  ];
  const repo: Partial<TenantRepository> = {
    findKeyByHash: async (h) => keys.find((k) => k.keyHash === h) ?? null,
    getTenant: async (id) => ({ tenantId: id, name: 'acme', createdAt: 0 }),
  };
  const guard = new ApiKeyGuard(new Reflector(), new TenantDirectory(repo as TenantRepository, 0));
  const context = (handler: keyof Routes, req: TenantRequest & { headers: Record<string, string> }) =>
    ({
      getHandler: () => Routes.prototype[handler],
      getClass: () => Routes,
      switchToHttp: () => ({ getRequest: () => req }),
    }) as unknown as ExecutionContext;

  it("refuses a key without the route's scope with 403 missingScope, and sets no tenant", async () => {
    const req = { headers: { 'x-api-key': 'esk_read' } } as TenantRequest & { headers: Record<string, string> };
    await expect(guard.canActivate(context('deploy', req))).rejects.toMatchObject({
      code: 'FORBIDDEN',
      details: { missingScope: 'deploy' },
    });
    expect(req.tenant).toBeUndefined();
  });

  it('lets a key holding the scope (or every scope) through, with its identity on the request', async () => {
    const req = { headers: { 'x-api-key': 'esk_all' } } as TenantRequest & { headers: Record<string, string> };
    await expect(guard.canActivate(context('deploy', req))).resolves.toBe(true);
    expect(req.apiKey).toEqual({ keyId: 'key_all', scopes: null, expiresAt: null });
  });

  it('a route without a scope takes any valid key; an invalid one is 401', async () => {
    await expect(guard.canActivate(context('whoami', { headers: { 'x-api-key': 'esk_read' } } as never))).resolves.toBe(true);
    await expect(guard.canActivate(context('whoami', { headers: { 'x-api-key': 'esk_nope' } } as never))).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });
  });
});
