import { LruMap } from '../common/lru-map';
import { RatePolicy } from '../config/quota-policy';
import { RateLimiter } from './rate-limiter.port';
import { BucketState, RateDecision, takeTokens } from './token-bucket';

/**
 * Buckets in this process's memory: a map lookup and a few float operations per request. Bounded:
 * past `maxBuckets` the least recently used bucket is dropped, which hands that key a full bucket
 * (only a key idle while 100,000 others were used).
 */
export class InProcessRateLimiter implements RateLimiter {
  readonly kind = 'in-process';
  private readonly buckets: LruMap<string, BucketState>;

  constructor(
    maxBuckets = 100_000,
    private readonly now: () => number = Date.now,
  ) {
    this.buckets = new LruMap(maxBuckets);
  }

  async take(key: string, policy: RatePolicy, n: number): Promise<RateDecision> {
    return this.takeNow(key, policy, n);
  }

  /** The same, synchronously (the Redis adapter decides locally with it while Redis is away). */
  takeNow(key: string, policy: RatePolicy, n: number): RateDecision {
    const { state, decision } = takeTokens(this.buckets.get(key), policy, n, this.now());
    this.buckets.set(key, state);
    return decision;
  }

  async close(): Promise<void> {
    this.buckets.clear();
  }
}
