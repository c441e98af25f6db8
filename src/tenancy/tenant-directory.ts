import { randomUUID } from 'node:crypto';
import { DomainError, notFound, validationFailed } from '../common/domain-error';
import { isoTime } from '../common/iso-time';
import { ApiKeyRecord, NewApiKey, TenantRecord, TenantRepository } from '../store/tenant-repository.port';
import { digestsEqual, generateApiKey, generateKeyId, hashApiKey } from './api-key';
import { KeyWatch } from './key-watch';
import { KeyView, parseKeySpec } from './key-spec';
import { effectiveScopes, HeldScopes, scopeRefusal, storedScopes, ungrantable } from './scope-check';
import { ApiScope } from './scopes';

export interface IssuedKey {
  keyId: string;
  apiKey: string;
}

/** What the request's key is: its id, its scopes (null: every scope) and its expiry (null: none). */
export interface KeyIdentity {
  keyId: string;
  scopes: HeldScopes;
  expiresAt: number | null;
}

/** A valid key: its tenant, its hash (what per-key limits count by) and what it may do. */
export interface ResolvedKey {
  tenant: TenantRecord;
  keyHash: string;
  key: KeyIdentity;
}

/** What a new key is made with; scopes absent or null: every scope. */
export interface KeySpec {
  scopes?: ApiScope[] | null;
  name?: string | null;
  expiresAt?: number | null;
}

interface CachedKey extends ResolvedKey {
  cachedUntil: number;
}

const MAX_CACHED_KEYS = 10_000;
/** A tenant's live keys (not revoked, not expired) made through POST /auth/keys; the admin API and CLI are not capped. */
export const MAX_TENANT_KEYS = 100;
/** Tenant records do not change while they exist; a tenant removed and imported again is seen anew after this. */
const TENANT_CACHE_MS = 60_000;
/** Streams of a key revoked (or expired) on any instance end within this. */
export const KEY_WATCH_MS = 5_000;

/**
 * Tenants and their keys. Authentication is on every request. With `cacheMs` 0 (the default) the
 * key's row is read in every event-loop turn that has a request with it (one unique-index lookup,
 * shared by that turn's requests: findKey), so a revocation holds at once on every instance; with
 * more, resolved keys are cached that long and a revocation takes up to that on the other
 * instances (at once on the one that made it). Expiry is checked on every request either way.
 * Tenant records are cached for a minute regardless (they do not change while they exist).
 */
export class TenantDirectory {
  private readonly cache = new Map<string, CachedKey>();
  private readonly tenants = new Map<string, { tenant: TenantRecord; until: number }>();
  private readonly lookups = new Map<string, Promise<ApiKeyRecord | null>>();
  /** Key text → its SHA-256 (hashOf); bounded like the key cache. */
  private readonly hashes = new Map<string, string>();

  private readonly keyWatch: KeyWatch;

  constructor(
    private readonly repo: TenantRepository,
    private readonly cacheMs: number,
    private readonly now: () => number = Date.now,
    /** How often the keys of open streams are checked (KeyWatch). */
    keyWatchMs: number = KEY_WATCH_MS,
  ) {
    this.keyWatch = new KeyWatch(repo, keyWatchMs, now);
  }

  /**
   * For what a key opened and keeps open (streams): `onInvalid` is called once the key is revoked
   * or has expired, within KEY_WATCH_MS on every instance. Returns the function that stops watching.
   */
  watchKey(keyHash: string, onInvalid: () => void): () => void {
    return this.keyWatch.watch(keyHash, onInvalid);
  }

  /** A tenant and its first key, which holds every scope. */
  async createTenant(name: string): Promise<{ tenant: TenantRecord } & IssuedKey> {
    const clean = checkName(name);
    const tenant: TenantRecord = { tenantId: randomUUID(), name: clean, createdAt: this.now() };
    await this.repo.createTenant(tenant);
    const key = await this.issueKey(tenant.tenantId);
    return { tenant, ...key };
  }

  /** The admin API and CLI: a key with any scopes (none given: every scope), not counted against MAX_TENANT_KEYS. */
  async issueKey(tenantId: string, spec: KeySpec = {}, apiKey: string = generateApiKey()): Promise<IssuedKey> {
    if (!(await this.repo.getTenant(tenantId))) throw notFound(`tenant '${tenantId}'`);
    const keyId = generateKeyId();
    await this.repo.addKey(this.newKey(tenantId, keyId, apiKey, spec));
    return { keyId, apiKey };
  }

  /** The admin API and CLI: a key as their body says (`{scopes?, name?, expiresAt?}`, all optional). */
  issueRequestedKey(tenantId: string, body: unknown): Promise<IssuedKey> {
    return this.issueKey(tenantId, parseKeySpec(body, this.now(), false));
  }

  /**
   * POST /auth/keys `{scopes, name, expiresAt?}`: a tenant's key making another. It may give only
   * scopes it holds (403 missingScope otherwise: keys:manage is never a way up) and no later expiry
   * than its own; the tenant keeps at most MAX_TENANT_KEYS live keys.
   */
  async createOwnKey(tenantId: string, maker: KeyIdentity, body: unknown) {
    const parsed = parseKeySpec(body, this.now(), true);
    const spec = { scopes: parsed.scopes ?? [], name: parsed.name, expiresAt: parsed.expiresAt };
    const missing = ungrantable(maker.scopes, spec.scopes);
    if (missing) throw scopeRefusal(missing);
    if (maker.expiresAt !== null && (spec.expiresAt === null || spec.expiresAt > maker.expiresAt)) {
      throw validationFailed('expiresAt', `may not be later than the expiry of the key making it (${isoTime(maker.expiresAt)})`);
    }
    const apiKey = generateApiKey();
    const key = this.newKey(tenantId, generateKeyId(), apiKey, spec);
    if (!(await this.repo.addKeyWithin(key, MAX_TENANT_KEYS, this.now()))) {
      throw new DomainError('QUOTA_EXCEEDED', `a tenant has at most ${MAX_TENANT_KEYS} live API keys: revoke one first`, {
        quota: 'apiKeys',
        limit: MAX_TENANT_KEYS,
      });
    }
    return { ...keyView(key), apiKey };
  }

  /** The tenant's keys not revoked, without secrets (only hashes are stored; they are not shown either). */
  async listKeys(tenantId: string) {
    return (await this.repo.listKeys(tenantId)).map(keyView);
  }

  async revokeKey(tenantId: string, keyId: string): Promise<void> {
    if (!(await this.repo.revokeKey(tenantId, keyId, this.now()))) throw notFound(`key '${keyId}' of tenant '${tenantId}'`);
    for (const [hash, entry] of this.cache) if (entry.tenant.tenantId === tenantId) this.cache.delete(hash);
    // Requests after this start their own lookups rather than join one begun before the revocation.
    this.lookups.clear();
  }

  /** A removed tenant (src/tenant-transfer): its cached keys go, so this instance refuses them at once. */
  forgetTenant(tenantId: string): void {
    for (const [hash, entry] of this.cache) if (entry.tenant.tenantId === tenantId) this.cache.delete(hash);
    this.tenants.delete(tenantId);
    this.lookups.clear();
  }

  /** The tenant a key names, or null for a missing, unknown, revoked or expired key. */
  async authenticate(apiKey: string | undefined): Promise<TenantRecord | null> {
    return (await this.resolve(apiKey))?.tenant ?? null;
  }

  /** The key, when valid now; null otherwise. */
  async resolve(apiKey: string | undefined): Promise<ResolvedKey | null> {
    const found = await this.verify(apiKey);
    return found instanceof DomainError ? null : found;
  }

  /** The key, when valid now; otherwise the 401 that says why (missing, invalid or revoked, expired). */
  async verify(apiKey: string | undefined): Promise<ResolvedKey | DomainError> {
    if (!apiKey) return new DomainError('UNAUTHORIZED', 'missing X-API-Key header');
    const found = apiKey.length > 512 ? null : await this.lookup(this.hashOf(apiKey));
    if (!found) return new DomainError('UNAUTHORIZED', 'invalid API key');
    if (found.key.expiresAt !== null && found.key.expiresAt <= this.now()) {
      return new DomainError('UNAUTHORIZED', `API key expired at ${isoTime(found.key.expiresAt)}`, {
        expiredAt: isoTime(found.key.expiresAt),
      });
    }
    return found;
  }

  /**
   * The key's SHA-256, remembered by the header's text: a client sends the same key on every
   * request, and the hash was a fifth of what authenticating cost. Holds keys this process has
   * already seen in its requests' headers, never writes them anywhere.
   */
  private hashOf(apiKey: string): string {
    let hash = this.hashes.get(apiKey);
    if (hash === undefined) {
      hash = hashApiKey(apiKey);
      if (this.hashes.size >= MAX_CACHED_KEYS) this.hashes.delete(this.hashes.keys().next().value as string);
      this.hashes.set(apiKey, hash);
    }
    return hash;
  }

  private async lookup(hash: string): Promise<ResolvedKey | null> {
    const now = this.now();
    const hit = this.cache.get(hash);
    // The map matched on the full hash already; the constant-time compare is on the store path.
    if (hit && hit.cachedUntil > now) return hit;
    const key = await this.findKey(hash);
    if (!key || key.revokedAt !== null || !digestsEqual(key.keyHash, hash)) {
      this.cache.delete(hash);
      return null;
    }
    const tenant = await this.tenant(key.tenantId);
    if (!tenant) return null;
    const found: ResolvedKey = {
      tenant,
      keyHash: hash,
      key: { keyId: key.keyId, scopes: storedScopes(key.scopes), expiresAt: key.expiresAt ?? null },
    };
    if (this.cacheMs > 0) {
      if (this.cache.size >= MAX_CACHED_KEYS) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(hash, { ...found, cachedUntil: now + this.cacheMs });
    }
    return found;
  }

  /**
   * The key's row. Requests with the same key in the same event-loop turn share one lookup (a client
   * with many connections would otherwise send a query per request): a revocation that commits while
   * a lookup is under way, or during the turn it settled in, holds from the next turn.
   */
  private findKey(hash: string): Promise<ApiKeyRecord | null> {
    const pending = this.lookups.get(hash);
    if (pending) return pending;
    const lookup = this.repo.findKeyByHash(hash);
    this.lookups.set(hash, lookup);
    // Shared until it has settled and the event loop's turn is over (not only until it settles):
    // on SQLite the read is answered at once, so without this every request read the row again.
    // A revocation on another instance holds from the next turn (a turn is milliseconds); one on
    // this instance clears the lookups at once (revokeKey).
    const forget = () => {
      if (this.lookups.get(hash) === lookup) this.lookups.delete(hash);
    };
    lookup.then(
      () => setImmediate(forget),
      () => forget(),
    );
    return lookup;
  }

  private async tenant(tenantId: string): Promise<TenantRecord | null> {
    const known = this.tenants.get(tenantId);
    if (known && known.until > this.now()) return known.tenant;
    const tenant = await this.repo.getTenant(tenantId);
    if (!tenant) return null;
    if (this.tenants.size >= MAX_CACHED_KEYS) this.tenants.delete(this.tenants.keys().next().value as string);
    this.tenants.set(tenantId, { tenant, until: this.now() + TENANT_CACHE_MS });
    return tenant;
  }

  private newKey(tenantId: string, keyId: string, apiKey: string, spec: KeySpec): NewApiKey {
    return {
      keyId,
      tenantId,
      keyHash: hashApiKey(apiKey),
      createdAt: this.now(),
      scopes: spec.scopes ?? null,
      name: spec.name ?? null,
      expiresAt: spec.expiresAt ?? null,
    };
  }

  /** For compose files and test harnesses: makes sure a tenant answers to this exact key. */
  async ensureKey(apiKey: string, tenantName: string): Promise<TenantRecord> {
    const existing = await this.repo.findKeyByHash(hashApiKey(apiKey));
    if (existing) {
      if (existing.revokedAt !== null) throw new DomainError('VALIDATION_FAILED', 'BOOTSTRAP_API_KEY was revoked');
      return (await this.repo.getTenant(existing.tenantId))!;
    }
    const tenant: TenantRecord = { tenantId: randomUUID(), name: checkName(tenantName), createdAt: this.now() };
    await this.repo.createTenant(tenant);
    await this.issueKey(tenant.tenantId, {}, apiKey);
    return tenant;
  }

  /** A tenant with a new key, created only if the store has no tenant yet (null otherwise): see FirstRun. */
  async createFirstTenant(name: string): Promise<({ tenant: TenantRecord } & IssuedKey) | null> {
    const tenant: TenantRecord = { tenantId: randomUUID(), name: checkName(name), createdAt: this.now() };
    const apiKey = generateApiKey();
    const keyId = generateKeyId();
    const created = await this.repo.createFirstTenant(tenant, {
      keyId,
      tenantId: tenant.tenantId,
      keyHash: hashApiKey(apiKey),
      createdAt: tenant.createdAt,
    });
    return created ? { tenant, keyId, apiKey } : null;
  }

  listTenants(): Promise<TenantRecord[]> {
    return this.repo.listTenants();
  }
}

function checkName(name: unknown): string {
  if (typeof name !== 'string' || name.trim().length === 0 || name.length > 200) {
    throw validationFailed('name', 'must be a non-empty string of at most 200 characters');
  }
  return name.trim();
}

/** A key as GET /auth/keys shows it: never its secret nor its hash. */
export function keyView(k: NewApiKey | ApiKeyRecord): KeyView {
  const scopes = storedScopes(k.scopes);
  return {
    keyId: k.keyId,
    name: k.name ?? null,
    scopes: effectiveScopes(scopes),
    allScopes: scopes === null,
    createdAt: isoTime(k.createdAt),
    expiresAt: k.expiresAt === null || k.expiresAt === undefined ? null : isoTime(k.expiresAt),
  };
}
