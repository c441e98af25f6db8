import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'es:isPublic';
/** Opts a route out of X-API-Key authentication (health, and the admin API which has its own token). */
export const Public = () => SetMetadata(IS_PUBLIC, true);

export const KEY_IN_QUERY = 'es:keyInQuery';
/**
 * Also accepts the key as `?apiKey=`: for streams browsers open (EventSource cannot set headers).
 * Query strings end up in access logs, so only where there is no other way.
 */
export const KeyInQuery = () => SetMetadata(KEY_IN_QUERY, true);
