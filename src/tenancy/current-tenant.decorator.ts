import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { TenantRecord } from '../store/tenant-repository.port';

export interface TenantRequest {
  tenant?: TenantRecord;
}

/** The tenant the request's API key named; set by ApiKeyGuard. */
export const CurrentTenant = createParamDecorator((_: unknown, ctx: ExecutionContext): TenantRecord => {
  return ctx.switchToHttp().getRequest<TenantRequest>().tenant!;
});
