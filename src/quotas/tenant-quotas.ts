import { Injectable } from '@nestjs/common';
import { AppMetrics, NO_METRICS } from '../observability/metrics/app-metrics';
import { DomainError } from '../common/domain-error';
import { RateLimitState } from '../common/rate-limit-fields';
import { ConcurrencyLimiter } from './concurrency-limiter.port';
import { RatePolicy } from '../config/quota-policy';
import { RateLimiter } from './rate-limiter.port';
import { StoredEventsGauge } from './stored-events-gauge';
import { TenantLimitsCatalog } from './tenant-limits';

/** The rate policies, by the name the RateLimit fields and error bodies give them. */
export type RatePolicyName = 'appends' | 'events' | 'uploads';

const UNIT: Record<RatePolicyName, RateLimitState['unit']> = { appends: 'requests', events: 'events', uploads: 'requests' };
const WHAT: Record<RatePolicyName, string> = { appends: 'append requests', events: 'appended events', uploads: 'uploads' };

/** Gives a slot back; safe to call twice. */
export type Release = () => void;
const NOTHING_HELD: Release = () => undefined;

/**
 * Every per-tenant quota, asked where the work arrives: append requests before their body is read,
 * their events once it is parsed, uploads before the archive is read, streams before the
 * handshake, webhook attempts before they are claimed. A refusal is a DomainError the one mapping
 * answers (RATE_LIMITED with Retry-After and the RateLimit fields; TOO_MANY_STREAMS with scope
 * `tenant`; QUOTA_EXCEEDED); an admission returns the state its RateLimit field reports.
 */
@Injectable()
export class TenantQuotas {
  constructor(
    private readonly limits: TenantLimitsCatalog,
    private readonly rates: RateLimiter,
    private readonly slots: ConcurrencyLimiter,
    private readonly storedEvents: StoredEventsGauge,
    private readonly metrics: AppMetrics = NO_METRICS,
  ) {}

  /** One append request (`POST /events` or `/events/batch`); null when the tenant has no such limit. */
  async admitAppendRequest(tenantId: string): Promise<RateLimitState | null> {
    const limits = await this.limits.limitsOf(tenantId);
    return this.take(tenantId, 'appends', limits.appendRequests, 1);
  }

  /** The `n` events of an append, before any is stored: the stored-events cap, then the events rate. */
  async admitAppendEvents(tenantId: string, n: number): Promise<RateLimitState | null> {
    const limits = await this.limits.limitsOf(tenantId);
    if (limits.storedEvents > 0) {
      const { admitted, stored } = await this.storedEvents.admit(tenantId, n, limits.storedEvents);
      if (!admitted) {
        throw new DomainError(
          'QUOTA_EXCEEDED',
          `the tenant has ${stored} events stored and may store at most ${limits.storedEvents}; ${n} more would pass it (nothing was stored)`,
          { quota: 'storedEvents', limit: limits.storedEvents, stored },
        );
      }
    }
    return this.take(tenantId, 'events', limits.appendEvents, n);
  }

  /** One reducer or projection upload, before its archive is read. */
  async admitUpload(tenantId: string): Promise<RateLimitState | null> {
    const limits = await this.limits.limitsOf(tenantId);
    return this.take(tenantId, 'uploads', limits.uploads, 1);
  }

  /** A WebSocket or SSE stream of the tenant, held until it closes; TOO_MANY_STREAMS (scope `tenant`) when all are open. */
  async acquireStream(tenantId: string): Promise<Release> {
    const { streams } = await this.limits.limitsOf(tenantId);
    if (streams === 0) return NOTHING_HELD;
    const slot = await this.slots.acquire(`${tenantId}:streams`, streams);
    if (!slot.granted) {
      throw new DomainError(
        'TOO_MANY_STREAMS',
        `the tenant already has ${slot.held} streams open, the most its quota allows; close one first`,
        {
          limit: streams,
          scope: 'tenant',
          policy: 'streams',
          unit: 'concurrent-requests',
          remaining: 0,
        },
      );
    }
    return slot.release;
  }

  /** A webhook attempt of the tenant; null while it already has its most in flight (the delivery waits for a later pass). */
  async acquireWebhookSlot(tenantId: string): Promise<Release | null> {
    const { webhooksInFlight } = await this.limits.limitsOf(tenantId);
    if (webhooksInFlight === 0) return NOTHING_HELD;
    const slot = await this.slots.acquire(`${tenantId}:webhooks`, webhooksInFlight);
    return slot.granted ? slot.release : null;
  }

  /**
   * A new projection of the tenant, which has `existing` already: QUOTA_EXCEEDED at its
   * `projections` limit. A redeploy of an existing projection is not asked here.
   */
  async admitProjection(tenantId: string, existing: number): Promise<void> {
    const { projections } = await this.limits.limitsOf(tenantId);
    if (projections > 0 && existing >= projections) {
      throw new DomainError(
        'QUOTA_EXCEEDED',
        `the tenant has ${existing} projections and may have at most ${projections}; delete one or redeploy an existing name (nothing was stored)`,
        { quota: 'projections', limit: projections, used: existing },
      );
    }
  }

  /** State keys one projection version may have (0: no limit); an event for a new key past it is held in `!unresolved`. */
  async keysPerProjection(tenantId: string): Promise<number> {
    return (await this.limits.limitsOf(tenantId)).keysPerProjection;
  }

  /** Event webhooks the tenant may have (0: no limit); the store checks it with the insert (src/event-webhooks). */
  async eventWebhooks(tenantId: string): Promise<number> {
    return (await this.limits.limitsOf(tenantId)).eventWebhooks;
  }

  /** Deliveries one webhook endpoint may have waiting (0: no limit); past it the endpoint is suspended. */
  async pendingDeliveries(tenantId: string): Promise<number> {
    return (await this.limits.limitsOf(tenantId)).pendingDeliveries;
  }

  private async take(tenantId: string, policy: RatePolicyName, rate: RatePolicy, n: number): Promise<RateLimitState | null> {
    if (rate.quota === 0) return null;
    const d = await this.rates.take(`${tenantId}:${policy}`, rate, n);
    const state: RateLimitState = {
      policy,
      limit: rate.quota,
      windowSeconds: rate.windowSeconds,
      unit: UNIT[policy],
      remaining: d.remaining,
      resetSeconds: d.resetSeconds,
    };
    if (d.allowed) return state;
    const retryAfterSeconds = Math.max(1, Math.ceil(d.retryAfterSeconds));
    this.metrics.rateLimited(tenantId, policy);
    throw new DomainError(
      'RATE_LIMITED',
      `over the tenant's quota of ${rate.quota} ${WHAT[policy]} per ${rate.windowSeconds} s${n > 1 ? ` (this request counts ${n})` : ''}; retry in ${retryAfterSeconds} s`,
      {
        policy,
        limit: rate.quota,
        windowSeconds: rate.windowSeconds,
        ...(policy === 'events' ? { unit: 'events' } : {}),
        remaining: d.remaining,
        retryAfterSeconds,
      },
    );
  }
}
