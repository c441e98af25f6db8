import { RatePolicy } from './quota-policy';
import { RateDecision } from './token-bucket';

/**
 * Token buckets by key. In-process by default (each instance counts on its own); on Redis when
 * REDIS_URL is set, so that several instances share one bucket per tenant.
 */
export interface RateLimiter {
  readonly kind: 'in-process' | 'redis';
  /** Takes `n` tokens from bucket `key` under `policy` (quota > 0), or says when they would be there. */
  take(key: string, policy: RatePolicy, n: number): Promise<RateDecision>;
  close(): Promise<void>;
}

export const RATE_LIMITER = Symbol('RATE_LIMITER');
