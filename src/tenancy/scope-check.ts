import { DomainError, validationFailed } from '../common/domain-error';
import { API_SCOPES, ApiScope } from './scopes';

/**
 * The scopes a key holds: a list, or null for every scope (a key made without scopes, and every
 * key made before scopes existed). Null also covers scopes added later: such a key is not
 * narrowed by an upgrade.
 */
export type HeldScopes = readonly ApiScope[] | null;

export function holdsScope(held: HeldScopes, scope: ApiScope): boolean {
  return held === null || held.includes(scope);
}

/** The scope a route needs that the key lacks, or null when the key may use the route. */
export function missingScope(held: HeldScopes, needed: ApiScope | undefined): ApiScope | null {
  return needed === undefined || holdsScope(held, needed) ? null : needed;
}

/** `403 FORBIDDEN {missingScope}`: the key is valid, but not for this. */
export function scopeRefusal(scope: ApiScope): DomainError {
  return new DomainError('FORBIDDEN', `this API key lacks the scope '${scope}'`, { missingScope: scope });
}

/** The refusal for a key on a route needing `needed`, or null. */
export function scopeCheck(held: HeldScopes, needed: ApiScope | undefined): DomainError | null {
  const missing = missingScope(held, needed);
  return missing ? scopeRefusal(missing) : null;
}

/** Every scope the key holds, spelled out (null → the whole list), in API_SCOPES order. */
export function effectiveScopes(held: HeldScopes): ApiScope[] {
  return API_SCOPES.filter((s) => holdsScope(held, s));
}

/**
 * A requested scope list, checked: an array of known scope names (duplicates dropped), in
 * API_SCOPES order. An empty list is allowed: such a key can only call GET /auth/whoami.
 */
export function parseScopes(value: unknown, field = 'scopes'): ApiScope[] {
  if (!Array.isArray(value)) throw validationFailed(field, `must be an array of scope names (${API_SCOPES.join(', ')})`);
  for (const s of value) {
    if (typeof s !== 'string' || !(API_SCOPES as readonly string[]).includes(s)) {
      throw validationFailed(field, `unknown scope ${JSON.stringify(s)}: the scopes are ${API_SCOPES.join(', ')}`);
    }
  }
  return API_SCOPES.filter((s) => (value as string[]).includes(s));
}

/**
 * What a key may give a key it makes: only scopes it holds itself, so that keys:manage can never
 * be a way up. The first requested scope the maker lacks, or null.
 */
export function ungrantable(maker: HeldScopes, requested: readonly ApiScope[]): ApiScope | null {
  return requested.find((s) => !holdsScope(maker, s)) ?? null;
}

/** Scopes as read from the store: null stays null (all); names this version does not know are dropped, never widened. */
export function storedScopes(stored: readonly string[] | null | undefined): HeldScopes {
  if (stored === null || stored === undefined) return null;
  return API_SCOPES.filter((s) => stored.includes(s));
}
