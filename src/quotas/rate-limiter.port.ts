import { RatePolicy } from '../config/quota-policy';
import { RateDecision } from './token-bucket';

/**
 * Token buckets by key. In-process by default (each instance counts on its own); on Redis when
 * REDIS_URL is set, so that several instances share one bucket per tenant. Adapters: InProcessRateLimiter,
 * RedisRateLimiter (QuotasModule chooses); called by TenantQuotas.
 */
export abstract class RateLimiter {
  abstract readonly kind: 'in-process' | 'redis';
  /** Takes `n` tokens from bucket `key` under `policy` (quota > 0), or says when they would be there. */
  abstract take(key: string, policy: RatePolicy, n: number): Promise<RateDecision>;
  abstract close(): Promise<void>;
}
