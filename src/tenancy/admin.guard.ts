import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { DomainError } from '../common/domain-error';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { secretsEqual } from './api-key';

/** Whether an `Authorization` header carries the admin token (the admin API and Bull Board). */
export function adminTokenMatches(header: string | undefined, token: string): boolean {
  const given = header?.startsWith('Bearer ') ? header.slice(7).trim() : '';
  return given !== '' && secretsEqual(given, token);
}

/** Why a request may not use the admin API, or null when it may. */
export function adminRefusal(header: string | undefined, token: string | undefined): DomainError | null {
  if (!token) return new DomainError('ADMIN_DISABLED', 'the admin API is off: set ADMIN_TOKEN to enable it');
  if (!adminTokenMatches(header, token)) return new DomainError('UNAUTHORIZED', 'missing or invalid admin token');
  return null;
}

/** The admin API exists only while ADMIN_TOKEN is configured; it takes `Authorization: Bearer <token>`. */
@Injectable()
export class AdminGuard implements CanActivate {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  canActivate(ctx: ExecutionContext): boolean {
    const header = ctx.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>().headers.authorization;
    const refusal = adminRefusal(header, this.config.adminToken);
    if (refusal) throw refusal;
    return true;
  }
}
