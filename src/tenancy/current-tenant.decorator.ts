import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { TenantRecord } from '../store/tenant-repository.port';

export interface TenantRequest {
  tenant?: TenantRecord;
  /** SHA-256 of the key the request authenticated with: what per-key limits count by. */
  apiKeyHash?: string;
}

/** The tenant the request's API key named; set before the body is read (RequestAuth), else by ApiKeyGuard. */
export const CurrentTenant = createParamDecorator((_: unknown, ctx: ExecutionContext): TenantRecord => {
  return ctx.switchToHttp().getRequest<TenantRequest>().tenant!;
});
