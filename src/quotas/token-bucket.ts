import { RatePolicy } from '../config/quota-policy';

/** What a bucket holds: tokens (negative after a request larger than the quota) as of `at` (epoch ms). */
export interface BucketState {
  tokens: number;
  at: number;
}

/** The answer to one request for tokens, in the terms the HTTP answer needs. */
export interface RateDecision {
  allowed: boolean;
  /** Whole tokens left after this request (never below 0). */
  remaining: number;
  /** Refused: seconds until this request would be admitted. 0 when allowed. */
  retryAfterSeconds: number;
  /** Seconds until the bucket is full again (0 when it is). */
  resetSeconds: number;
}

/** Float refills must not refuse a request that is due by a rounding error. */
const EPSILON = 1e-9;

export function ratePerMs(p: RatePolicy): number {
  return p.quota / (p.windowSeconds * 1000);
}

/** Tokens in the bucket at `now`: what it held plus the refill since, never above the quota. */
export function tokensAt(state: BucketState | undefined, p: RatePolicy, now: number): number {
  if (!state) return p.quota;
  return Math.min(p.quota, state.tokens + Math.max(0, now - state.at) * ratePerMs(p));
}

/**
 * Whether `n` tokens may be taken now, and the bucket after. A request is admitted when the
 * bucket holds min(n, quota): one larger than the whole quota (a 1,000-event batch against a
 * smaller events quota) goes through from a full bucket and leaves it in debt, so it is never
 * refused forever and the long-run rate still holds.
 */
export function takeTokens(
  state: BucketState | undefined,
  p: RatePolicy,
  n: number,
  now: number,
): { state: BucketState; decision: RateDecision } {
  const tokens = tokensAt(state, p, now);
  const need = Math.min(n, p.quota);
  if (tokens + EPSILON >= need) {
    const after = tokens - n;
    return { state: { tokens: after, at: now }, decision: decide(true, after, p, need) };
  }
  return { state: { tokens, at: now }, decision: decide(false, tokens, p, need) };
}

/** The decision a bucket holding `tokens` gives (also what the Redis adapter computes from the script's answer). */
export function decide(allowed: boolean, tokens: number, p: RatePolicy, need: number): RateDecision {
  const perSecond = ratePerMs(p) * 1000;
  return {
    allowed,
    remaining: Math.max(0, Math.floor(tokens + EPSILON)),
    retryAfterSeconds: allowed ? 0 : Math.max(0, need - tokens) / perSecond,
    resetSeconds: Math.max(0, p.quota - tokens) / perSecond,
  };
}
