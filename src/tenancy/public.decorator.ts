import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'es:isPublic';
/** Opts a route out of X-API-Key authentication (health, and the admin API which has its own token). */
export const Public = () => SetMetadata(IS_PUBLIC, true);
