import { RouteOptions } from '../common/route-options';

/**
 * What an API key may do. A key made without scopes (and every key made before scopes existed)
 * holds all of them. Each route names the one scope it needs with `@RequiresScope`; a route that
 * names none needs only a valid key.
 */
export const API_SCOPES = ['events:read', 'events:write', 'events:erase', 'state:read', 'deploy', 'keys:manage'] as const;
export type ApiScope = (typeof API_SCOPES)[number];

/** The scope a route needs, checked with the key before the body is read (src/tenancy/request-auth.ts). */
export const RequiresScope = (scope: ApiScope) => RouteOptions({ scope });
