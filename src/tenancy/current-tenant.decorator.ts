import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { TenantRecord } from '../store/tenant-repository.port';
import type { KeyIdentity } from './tenant-directory';

export interface TenantRequest {
  tenant?: TenantRecord;
  /** SHA-256 of the key the request authenticated with: what per-key limits count by. */
  apiKeyHash?: string;
  /** The key itself: its id, scopes and expiry (GET /auth/whoami, /auth/keys). */
  apiKey?: KeyIdentity;
}

/** The tenant the request's API key named; set before the body is read (RequestAuth), else by ApiKeyGuard. */
export const CurrentTenant = createParamDecorator((_: unknown, ctx: ExecutionContext): TenantRecord => {
  return ctx.switchToHttp().getRequest<TenantRequest>().tenant!;
});

/** The request's API key (id, scopes, expiry); set with the tenant. */
export const CurrentKey = createParamDecorator((_: unknown, ctx: ExecutionContext): KeyIdentity => {
  return ctx.switchToHttp().getRequest<TenantRequest>().apiKey!;
});
