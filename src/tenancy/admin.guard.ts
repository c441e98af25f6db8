import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { DomainError } from '../common/domain-error';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { secretsEqual } from './api-key';

/** The admin API exists only while ADMIN_TOKEN is configured; it takes `Authorization: Bearer <token>`. */
@Injectable()
export class AdminGuard implements CanActivate {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  canActivate(ctx: ExecutionContext): boolean {
    const token = this.config.adminToken;
    if (!token) throw new DomainError('ADMIN_DISABLED', 'the admin API is off: set ADMIN_TOKEN to enable it');
    const header = ctx.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>().headers.authorization;
    const given = header?.startsWith('Bearer ') ? header.slice(7).trim() : '';
    if (!given || !secretsEqual(given, token)) throw new DomainError('UNAUTHORIZED', 'missing or invalid admin token');
    return true;
  }
}
