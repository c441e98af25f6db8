import { validationFailed } from '../common/domain-error';
import { arrayOf, Infer, JsonSchema, object, string } from '../common/json-schema';
import { parseScopes } from './scope-check';
import { API_SCOPES, ApiScope } from './scopes';

export const MAX_KEY_NAME = 200;

/** ISO 8601 with a time and a zone (`2027-01-31T00:00:00Z`, `…+02:00`): a bare date's zone would be a guess. */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

export interface ParsedKeySpec {
  scopes: ApiScope[] | null;
  name: string | null;
  expiresAt: number | null;
}

/**
 * The body of a key's creation: `{scopes, name, expiresAt?}`. On POST /auth/keys scopes and name
 * are required (a tenant's key is always explicit); the admin API and CLI may leave them out (no
 * scopes: every scope). `expiresAt` must lie in the future. Unknown fields are refused.
 */
export function parseKeySpec(body: unknown, now: number, required: boolean): ParsedKeySpec {
  if (body === undefined || body === null) {
    if (required) throw validationFailed('body', 'must be a JSON object {scopes, name, expiresAt?}');
    return { scopes: null, name: null, expiresAt: null };
  }
  if (typeof body !== 'object' || Array.isArray(body)) throw validationFailed('body', 'must be a JSON object {scopes, name, expiresAt?}');
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).filter((k) => !['scopes', 'name', 'expiresAt'].includes(k));
  if (unknown.length) throw validationFailed(unknown[0], 'is not a field of a key (scopes, name, expiresAt)');
  if (required && b.scopes === undefined) throw validationFailed('scopes', `is required: a list of ${API_SCOPES.join(', ')}`);
  if (required && b.name === undefined) throw validationFailed('name', 'is required');
  return {
    scopes: b.scopes === undefined || b.scopes === null ? null : parseScopes(b.scopes),
    name: b.name === undefined || b.name === null ? null : keyName(b.name),
    expiresAt: b.expiresAt === undefined || b.expiresAt === null ? null : expiry(b.expiresAt, now),
  };
}

function keyName(v: unknown): string {
  if (typeof v !== 'string' || v.trim().length === 0 || v.length > MAX_KEY_NAME) {
    throw validationFailed('name', `must be a non-empty string of at most ${MAX_KEY_NAME} characters`);
  }
  return v.trim();
}

function expiry(v: unknown, now: number): number {
  const ms = typeof v === 'string' && ISO_INSTANT.test(v) ? Date.parse(v) : NaN;
  if (!Number.isFinite(ms)) throw validationFailed('expiresAt', 'must be an ISO 8601 time with a zone, e.g. 2027-01-31T00:00:00Z');
  if (ms <= now) throw validationFailed('expiresAt', 'must be in the future');
  return ms;
}

const SCOPE_LIST = arrayOf(string({ enum: [...API_SCOPES] }));
/** Body of POST /auth/keys (and, every field optional, of the admin API's key issue). */
export const CREATE_KEY_BODY_SCHEMA = object(
  { scopes: SCOPE_LIST, name: string({ minLength: 1, maxLength: MAX_KEY_NAME }) },
  { expiresAt: string({ format: 'date-time', description: 'ISO 8601 with a zone; in the future' }) },
  { additionalProperties: false },
);
export const ISSUE_KEY_BODY_SCHEMA = object(
  {},
  {
    scopes: { ...SCOPE_LIST, description: 'absent: every scope' },
    name: string({ minLength: 1, maxLength: MAX_KEY_NAME }),
    expiresAt: string({ format: 'date-time', description: 'ISO 8601 with a zone; in the future' }),
  },
  { additionalProperties: false },
);
export const KEY_VIEW_SCHEMA = object({
  keyId: string({ pattern: '^key_' }),
  name: { type: ['string', 'null'] },
  scopes: SCOPE_LIST,
  allScopes: { type: 'boolean', description: 'made without scopes (or before scopes existed): holds every scope, later ones too' },
  createdAt: string({ format: 'date-time' }),
  expiresAt: { type: ['string', 'null'], format: 'date-time' },
});
export type KeyView = Infer<typeof KEY_VIEW_SCHEMA>;
export const KEYS_SCHEMA = object({ keys: arrayOf(KEY_VIEW_SCHEMA) });
export const KEY_CREATED_SCHEMA = object({
  ...(KEY_VIEW_SCHEMA.properties as Record<string, JsonSchema>),
  apiKey: string({ pattern: '^esk_', description: 'shown once; store it' }),
});
