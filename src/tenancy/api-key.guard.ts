import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';
import { ServiceRouteOptions } from '../common/route-options';
import { TenantRequest } from './current-tenant.decorator';
import { IS_PUBLIC, KEY_IN_QUERY } from './public.decorator';
import { apiKeyOf, authenticateKey } from './request-auth';
import { TenantDirectory } from './tenant-directory';

/**
 * The Nest side of API-key authentication. RequestAuth has normally resolved the tenant already,
 * in Fastify's onRequest, before the body was read; this guard then only reuses it. It still
 * authenticates on its own when that hook is not installed (an app built without createApp), the
 * route's scope included.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly directory: TenantDirectory,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const req = ctx
      .switchToHttp()
      .getRequest<TenantRequest & { headers: Record<string, string | string[] | undefined>; query?: unknown }>();
    // The common case first: RequestAuth resolved the key (public routes never carry a tenant).
    if (req.tenant) return true;
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [ctx.getHandler(), ctx.getClass()])) return true;
    const keyInQuery = this.reflector.getAllAndOverride<boolean>(KEY_IN_QUERY, [ctx.getHandler(), ctx.getClass()]) ?? false;
    // The route's scope rides in its Fastify route config (@RequiresScope), as the hook reads it.
    const options = (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, ctx.getHandler()) ?? {}) as ServiceRouteOptions;
    const refusal = await authenticateKey(this.directory, req, apiKeyOf(req, keyInQuery), options.scope);
    if (refusal) throw refusal;
    return true;
  }
}
