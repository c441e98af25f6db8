import { nullable, object, string, timestamp } from '../common/json-schema';
import { Logger } from '@nestjs/common';
import { notFound } from '../common/domain-error';
import { LruMap } from '../common/lru-map';
import { TenantRepository } from '../store/tenant-repository.port';
import {
  effectiveLimits,
  LIMIT_NAMES,
  LIMIT_OVERRIDES_SCHEMA,
  LimitOverrides,
  parseOverrides,
  TENANT_LIMITS_SCHEMA,
  TenantLimits,
} from '../config/quota-policy';

/** What the admin API shows of one tenant's limits. */
/** GET and PUT /admin/tenants/{id}/limits. */
export const TENANT_LIMITS_VIEW_SCHEMA = object({
  tenantId: string(),
  limits: { ...TENANT_LIMITS_SCHEMA, description: 'what applies now: the defaults with the overrides on top' },
  overrides: LIMIT_OVERRIDES_SCHEMA,
  defaults: TENANT_LIMITS_SCHEMA,
  updatedAt: nullable(timestamp({ description: 'when the overrides were last replaced' })),
});

export interface TenantLimitsView {
  tenantId: string;
  /** What applies now: the defaults with the overrides on top. */
  limits: TenantLimits;
  overrides: LimitOverrides;
  defaults: TenantLimits;
  /** When the overrides were last replaced (epoch ms), null if never. */
  updatedAt: number | null;
}

interface Cached {
  limits: TenantLimits;
  until: number;
}

type LimitsRepository = Pick<TenantRepository, 'getTenant' | 'getLimits' | 'putLimits'>;

/**
 * Each tenant's effective limits: the configured defaults with its overrides from the store on
 * top. Asked on every append, so they are cached for `cacheMs` (one store read per tenant per
 * period, which the requests arriving meanwhile share). A change made here is immediate on this
 * instance; made elsewhere (CLI, another instance) it shows within `cacheMs`.
 */
export class TenantLimitsCatalog {
  private readonly logger = new Logger('Quotas');
  private readonly cache = new LruMap<string, Cached>(100_000);
  /** Reads in progress, by tenant. */
  private readonly loading = new Map<string, Promise<TenantLimits>>();

  constructor(
    private readonly repo: LimitsRepository,
    readonly defaults: TenantLimits,
    private readonly cacheMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The limits that apply to the tenant now. */
  limitsOf(tenantId: string): TenantLimits | Promise<TenantLimits> {
    const hit = this.cache.get(tenantId);
    if (hit && hit.until > this.now()) return hit.limits;
    // A burst of the tenant's requests waits on one read.
    let reading = this.loading.get(tenantId);
    if (!reading) {
      reading = this.load(tenantId)
        .catch((e) => {
          if (!hit) throw e;
          // The store is failing: the limits last read stand a while longer rather than failing every request.
          this.logger.warn(
            `reading the limits of tenant ${tenantId} failed, keeping the cached ones: ${e instanceof Error ? e.message : e}`,
          );
          hit.until = this.now() + this.cacheMs;
          return hit.limits;
        })
        .finally(() => this.loading.delete(tenantId));
      this.loading.set(tenantId, reading);
    }
    return reading;
  }

  async view(tenantId: string): Promise<TenantLimitsView> {
    if (!(await this.repo.getTenant(tenantId))) throw notFound(`tenant '${tenantId}'`);
    const rec = await this.repo.getLimits(tenantId);
    const overrides = rec ? readStored(rec.limits) : {};
    return {
      tenantId,
      limits: effectiveLimits(this.defaults, overrides),
      overrides,
      defaults: this.defaults,
      updatedAt: rec?.updatedAt ?? null,
    };
  }

  /** Replaces the tenant's overrides (`{}` clears them); VALIDATION_FAILED for a bad one, NOT_FOUND for an unknown tenant. */
  async replace(tenantId: string, input: unknown): Promise<TenantLimitsView> {
    const overrides = parseOverrides(input);
    if (!(await this.repo.putLimits({ tenantId, limits: JSON.stringify(overrides), updatedAt: this.now() })))
      throw notFound(`tenant '${tenantId}'`);
    this.cache.delete(tenantId);
    return this.view(tenantId);
  }

  private async load(tenantId: string): Promise<TenantLimits> {
    const rec = await this.repo.getLimits(tenantId);
    const limits = effectiveLimits(this.defaults, rec ? readStored(rec.limits) : {});
    this.cache.set(tenantId, { limits, until: this.now() + this.cacheMs });
    return limits;
  }
}

/**
 * Overrides as stored: written by parseOverrides, so valid; a name this version does not know
 * (written by a newer one) is passed over rather than failing the tenant's requests.
 */
function readStored(text: string): LimitOverrides {
  const raw = JSON.parse(text) as Record<string, unknown>;
  const known = Object.fromEntries(Object.entries(raw).filter(([name]) => (LIMIT_NAMES as readonly string[]).includes(name)));
  return parseOverrides(known);
}
