/**
 * The `RateLimit-Policy` and `RateLimit` response fields of draft-ietf-httpapi-ratelimit-headers
 * (revision -10/-11: Structured Field lists of String items with parameters). A limit the service
 * applies is named by a policy; its quota `q` counts requests unless said otherwise, within `w`
 * seconds. `r` is what is left, `t` the seconds until more is made available.
 */
export interface RateLimitState {
  /** The policy's name, e.g. `appends`. */
  policy: string;
  /** `q`: the quota. */
  limit: number;
  /** `w`: the window in seconds; absent for a concurrency limit. */
  windowSeconds?: number;
  /**
   * `qu`: what the quota counts. `requests` (the draft's default) and `concurrent-requests` are
   * registered; `events` is not, so it goes out as our own prefixed parameter `es-unit`.
   */
  unit?: 'requests' | 'concurrent-requests' | 'events';
  /** `r`: quota units left now. */
  remaining: number;
  /** `t`: seconds until more quota is made available; absent when there is nothing to wait for. */
  resetSeconds?: number;
}

export function policyItem(s: RateLimitState): string {
  let item = `"${s.policy}";q=${s.limit}`;
  if (s.unit === 'concurrent-requests') item += ';qu="concurrent-requests"';
  if (s.windowSeconds !== undefined) item += `;w=${s.windowSeconds}`;
  if (s.unit === 'events') item += ';es-unit="events"';
  return item;
}

export function serviceLimitItem(s: RateLimitState): string {
  const r = Math.max(0, Math.floor(s.remaining));
  return s.resetSeconds === undefined ? `"${s.policy}";r=${r}` : `"${s.policy}";r=${r};t=${Math.max(0, Math.ceil(s.resetSeconds))}`;
}

/** Both fields for the limits that applied to one request. */
export function rateLimitHeaders(states: readonly RateLimitState[]): Record<string, string> {
  if (states.length === 0) return {};
  return {
    'ratelimit-policy': states.map(policyItem).join(', '),
    ratelimit: states.map(serviceLimitItem).join(', '),
  };
}

/** The state an error's details describe (the quota refusals carry one), or null. */
export function rateLimitStateOf(details: Record<string, unknown>): RateLimitState | null {
  const { policy, limit, remaining } = details;
  if (typeof policy !== 'string' || typeof limit !== 'number' || typeof remaining !== 'number') return null;
  return {
    policy,
    limit,
    remaining,
    windowSeconds: typeof details.windowSeconds === 'number' ? details.windowSeconds : undefined,
    unit: details.unit as RateLimitState['unit'],
    resetSeconds: typeof details.retryAfterSeconds === 'number' ? details.retryAfterSeconds : undefined,
  };
}
