import { isoTime } from '../common/iso-time';
import { arrayOf, Infer, object, string, timestamp } from '../common/json-schema';
import { TenantRecord } from '../store/tenant-repository.port';
import { API_SCOPES } from './scopes';

/** The tenant record (GET /auth/whoami, the admin API's list). */
export const tenantView = (t: TenantRecord): Tenant => ({ tenantId: t.tenantId, name: t.name, createdAt: isoTime(t.createdAt) });

const TENANT_FIELDS = { tenantId: string(), name: string(), createdAt: timestamp() };
export const TENANT_SCHEMA = object(TENANT_FIELDS);
export type Tenant = Infer<typeof TENANT_SCHEMA>;
export const TENANTS_SCHEMA = object({ tenants: arrayOf(TENANT_SCHEMA) });
/** GET /auth/whoami: the tenant, and the calling key's id and scopes (every scope spelled out for a key without a list). */
export const WHOAMI_SCHEMA = object({
  ...TENANT_FIELDS,
  keyId: string({ pattern: '^key_' }),
  scopes: arrayOf(string({ enum: [...API_SCOPES] })),
});

/** A key as issued: shown once (only its hash is kept). */
const ISSUED_KEY_FIELDS = {
  keyId: string({ pattern: '^key_' }),
  apiKey: string({ pattern: '^esk_', description: 'shown once; store it' }),
};
export const ISSUED_KEY_SCHEMA = object(ISSUED_KEY_FIELDS);
/** POST /admin/tenants: the tenant and its first key. */
export const TENANT_CREATED_SCHEMA = object({ ...TENANT_FIELDS, ...ISSUED_KEY_FIELDS });
/** Body of POST /admin/tenants (checked by TenantDirectory.createTenant). */
export const CREATE_TENANT_BODY_SCHEMA = object({ name: string({ minLength: 1 }) });
