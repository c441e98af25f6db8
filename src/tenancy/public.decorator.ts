import { applyDecorators, SetMetadata, UseGuards } from '@nestjs/common';
import { RouteOptions } from '../common/route-options';
import { AdminGuard } from './admin.guard';

export const IS_PUBLIC = 'es:isPublic';
/** Opts a route out of X-API-Key authentication (health). */
export const Public = () => applyDecorators(SetMetadata(IS_PUBLIC, true), RouteOptions({ auth: 'public' }));

/** The admin API: `Authorization: Bearer <ADMIN_TOKEN>` instead of an API key, checked before the body is read too. */
export const AdminApi = () => applyDecorators(SetMetadata(IS_PUBLIC, true), RouteOptions({ auth: 'admin' }), UseGuards(AdminGuard));

export const KEY_IN_QUERY = 'es:keyInQuery';
/**
 * Also accepts the key as `?apiKey=`: for streams browsers open (EventSource cannot set headers).
 * Query strings end up in access logs (ours redact it), so only where there is no other way.
 */
export const KeyInQuery = () => applyDecorators(SetMetadata(KEY_IN_QUERY, true), RouteOptions({ keyInQuery: true }));
