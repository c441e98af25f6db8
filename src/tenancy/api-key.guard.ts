import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DomainError } from '../common/domain-error';
import { TenantRequest } from './current-tenant.decorator';
import { IS_PUBLIC, KEY_IN_QUERY } from './public.decorator';
import { TenantDirectory } from './tenant-directory';

@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly directory: TenantDirectory,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [ctx.getHandler(), ctx.getClass()])) return true;
    const req = ctx.switchToHttp().getRequest<TenantRequest & { headers: Record<string, string | string[] | undefined>; query?: Record<string, unknown> }>();
    let raw = req.headers['x-api-key'];
    if (raw === undefined && this.reflector.getAllAndOverride<boolean>(KEY_IN_QUERY, [ctx.getHandler(), ctx.getClass()])) {
      const q = req.query?.apiKey;
      if (typeof q === 'string') raw = q;
    }
    const tenant = await this.directory.authenticate(Array.isArray(raw) ? raw[0] : raw);
    if (!tenant) throw new DomainError('UNAUTHORIZED', raw ? 'invalid API key' : 'missing X-API-Key header');
    req.tenant = tenant;
    return true;
  }
}
