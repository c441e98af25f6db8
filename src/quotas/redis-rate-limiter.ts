import type Redis from 'ioredis';
import { LruMap } from '../common/lru-map';
import { InProcessRateLimiter } from './in-process-rate-limiter';
import { RatePolicy } from '../config/quota-policy';
import { RateLimiter } from './rate-limiter.port';
import { RedisCircuit } from './redis-circuit';
import { decide, RateDecision, ratePerMs } from './token-bucket';

/**
 * The shared bucket, refilled and spent atomically on Redis's clock (so instances' clocks do not
 * matter). It grants `need` tokens plus up to `lease` more for the instance to spend locally; a
 * request is admitted when the bucket holds min(need, quota), as in token-bucket.ts.
 * Returns {granted, tokens left as text (a float)}.
 */
const TAKE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local quota = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local need = tonumber(ARGV[3])
local lease = tonumber(ARGV[4])
local s = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = quota
if s[1] then
  tokens = math.min(quota, tonumber(s[1]) + math.max(0, now - tonumber(s[2])) * rate)
end
local granted = 0
if tokens + 1e-9 >= math.min(need, quota) then
  tokens = tokens - need
  granted = need
  if lease > 0 and tokens >= 1 then
    local extra = math.min(lease, math.floor(tokens))
    tokens = tokens - extra
    granted = granted + extra
  end
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((quota - tokens) / rate) + 1000)
return {granted, tostring(tokens)}
`;

type TakeCommand = (key: string, quota: number, rate: number, need: number, lease: number) => Promise<[number, string]>;

export interface RedisRateLimiterOptions {
  keyPrefix?: string;
  /** Tokens leased per round trip, as seconds of the policy's refill (capped at a tenth of its quota). */
  leaseSeconds?: number;
  /** Leased tokens not spent within this are dropped (they were counted as spent in Redis: a lease never lets the rate be exceeded). */
  leaseTtlMs?: number;
  circuit?: RedisCircuit;
}

/** What this instance holds of one bucket: leased tokens, and the last word from Redis. */
interface Lease {
  quota: number;
  windowSeconds: number;
  tokens: number;
  until: number;
  /** The shared bucket as Redis last reported it (for the RateLimit field's estimate). */
  shared: number;
  sharedAt: number;
  /** Round trips of this bucket run one after another, so a burst waits on one refill instead of sending many. */
  queue: Promise<unknown>;
}

/**
 * Buckets shared by every instance through Redis, without a round trip per request: a refill
 * leases a few tokens (by default 50 ms of the rate, at most a tenth of the quota) that this
 * instance then spends in memory. What an instance leases is taken from the shared bucket at
 * once, so together the instances never admit more than the policy; the cost is that leased
 * tokens not spent within a second are lost to the others. Slow policies (uploads per hour) lease
 * nothing and ask Redis each time. When Redis fails, the decision falls back to a bucket of this
 * instance (RedisCircuit).
 */
export class RedisRateLimiter implements RateLimiter {
  readonly kind = 'redis';
  private readonly leases = new LruMap<string, Lease>(100_000);
  private readonly fallback = new InProcessRateLimiter();
  private readonly takeCommand: TakeCommand;
  private readonly keyPrefix: string;
  private readonly leaseSeconds: number;
  private readonly leaseTtlMs: number;
  private readonly circuit: RedisCircuit;
  roundTrips = 0;

  constructor(
    private readonly redis: Redis,
    options: RedisRateLimiterOptions = {},
  ) {
    this.keyPrefix = options.keyPrefix ?? 'es:quota:bucket:';
    this.leaseSeconds = options.leaseSeconds ?? 0.05;
    this.leaseTtlMs = options.leaseTtlMs ?? 1_000;
    this.circuit = options.circuit ?? new RedisCircuit();
    if (!(redis as unknown as Record<string, unknown>).esTakeTokens)
      redis.defineCommand('esTakeTokens', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    this.takeCommand = (redis as unknown as { esTakeTokens: TakeCommand }).esTakeTokens.bind(redis);
  }

  take(key: string, policy: RatePolicy, n: number): Promise<RateDecision> {
    const lease = this.leaseOf(key, policy);
    const now = Date.now();
    // The hot path: spent from the lease, no I/O.
    if (lease.until > now && lease.tokens >= n) return Promise.resolve(this.spend(lease, policy, n, now));
    // Refused without asking: Redis's last word plus the refill since is the most the shared bucket
    // can hold now (other instances only take from it), so a tenant hammering past its quota costs no round trips.
    const most = this.sharedAtMost(lease, policy, now) + (lease.until > now ? lease.tokens : 0);
    if (most + 1e-9 < Math.min(n, policy.quota)) return Promise.resolve(decide(false, most, policy, Math.min(n, policy.quota)));
    const run = lease.queue.then(() => this.refillAndTake(key, lease, policy, n));
    lease.queue = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    this.leases.clear();
  }

  private async refillAndTake(key: string, lease: Lease, policy: RatePolicy, n: number): Promise<RateDecision> {
    let now = Date.now();
    if (lease.until <= now) lease.tokens = 0;
    // Another request's refill may have brought enough while this one waited.
    if (lease.tokens >= n) return this.spend(lease, policy, n, now);
    if (!this.circuit.closed()) return this.fallback.takeNow(key, policy, n);
    const fromLease = lease.tokens;
    const ask = n - fromLease;
    const rate = ratePerMs(policy);
    const extra = Math.floor(Math.min(rate * 1000 * this.leaseSeconds, policy.quota / 10));
    let granted: number;
    let shared: number;
    try {
      this.roundTrips++;
      const [g, tokens] = await this.takeCommand(this.keyPrefix + key, policy.quota, rate, ask, extra);
      granted = Number(g);
      shared = Number(tokens);
    } catch (e) {
      this.circuit.failed(e);
      return this.fallback.takeNow(key, policy, n);
    }
    now = Date.now();
    lease.shared = shared;
    lease.sharedAt = now;
    if (granted < ask) return decide(false, shared + fromLease, policy, Math.min(ask, policy.quota) + fromLease);
    lease.tokens = granted - ask;
    lease.until = now + this.leaseTtlMs;
    return decide(true, shared + lease.tokens, policy, n);
  }

  private spend(lease: Lease, policy: RatePolicy, n: number, now: number): RateDecision {
    lease.tokens -= n;
    return decide(true, Math.min(policy.quota, this.sharedAtMost(lease, policy, now) + lease.tokens), policy, n);
  }

  /** The shared bucket as Redis last reported it plus its refill since: what it holds now if no other instance took any. */
  private sharedAtMost(lease: Lease, policy: RatePolicy, now: number): number {
    return Math.min(policy.quota, lease.shared + Math.max(0, now - lease.sharedAt) * ratePerMs(policy));
  }

  private leaseOf(key: string, policy: RatePolicy): Lease {
    let lease = this.leases.get(key);
    if (!lease || lease.quota !== policy.quota || lease.windowSeconds !== policy.windowSeconds) {
      // A new policy (an override changed): tokens leased under the old one are dropped.
      lease = {
        quota: policy.quota,
        windowSeconds: policy.windowSeconds,
        tokens: 0,
        until: 0,
        shared: policy.quota,
        sharedAt: 0,
        queue: Promise.resolve(),
      };
      this.leases.set(key, lease);
    }
    return lease;
  }
}
