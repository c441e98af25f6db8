import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DomainError } from '../common/domain-error';
import { TenantRequest } from './current-tenant.decorator';
import { IS_PUBLIC } from './public.decorator';
import { TenantDirectory } from './tenant-directory';

@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly directory: TenantDirectory,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [ctx.getHandler(), ctx.getClass()])) return true;
    const req = ctx.switchToHttp().getRequest<TenantRequest & { headers: Record<string, string | string[] | undefined> }>();
    const raw = req.headers['x-api-key'];
    const tenant = await this.directory.authenticate(Array.isArray(raw) ? raw[0] : raw);
    if (!tenant) throw new DomainError('UNAUTHORIZED', raw ? 'invalid API key' : 'missing X-API-Key header');
    req.tenant = tenant;
    return true;
  }
}
