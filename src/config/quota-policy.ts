import { validationFailed } from '../common/domain-error';
import { integer, JsonSchema, object } from '../common/json-schema';

/**
 * A rate: `quota` units per `windowSeconds`, kept as a token bucket that holds at most `quota`
 * tokens and refills `quota / windowSeconds` a second. So the window is also the burst: a tenant
 * idle for a window may spend the whole quota at once. A quota of 0 is no limit.
 */
export interface RatePolicy {
  quota: number;
  windowSeconds: number;
}

/** Every per-tenant limit; 0 (or a quota of 0) means no limit. */
export interface TenantLimits {
  /** Append requests (`POST /events` and `/events/batch` each count one). */
  appendRequests: RatePolicy;
  /** Events appended (a batch of 1,000 counts 1,000). */
  appendEvents: RatePolicy;
  /** Reducer and projection uploads together. */
  uploads: RatePolicy;
  /** WebSocket and SSE streams open at once, all keys of the tenant together. */
  streams: number;
  /** Webhook attempts of the tenant in flight at once. */
  webhooksInFlight: number;
  /** Events the tenant may have stored in all. */
  storedEvents: number;
  /** Projections of the tenant (a redeploy of an existing one is not a new one). */
  projections: number;
  /** State keys (lanes) of one projection version; an event for a new key past it is held in `!unresolved` (KEY_LIMIT). */
  keysPerProjection: number;
  /** Webhook deliveries of one projection waiting to be delivered; past it the endpoint is suspended. */
  pendingDeliveries: number;
  /** Event webhooks (subscriptions to the tenant's log delivered to a URL) the tenant may have. */
  eventWebhooks: number;
}

export type LimitName = keyof TenantLimits;
export type LimitOverrides = Partial<TenantLimits>;

export const RATE_LIMIT_NAMES = ['appendRequests', 'appendEvents', 'uploads'] as const;
export const COUNT_LIMIT_NAMES = [
  'streams',
  'webhooksInFlight',
  'storedEvents',
  'projections',
  'keysPerProjection',
  'pendingDeliveries',
  'eventWebhooks',
] as const;
export const LIMIT_NAMES: readonly LimitName[] = [...RATE_LIMIT_NAMES, ...COUNT_LIMIT_NAMES];

const MAX_QUOTA = 1_000_000_000;
/** A day: a longer window would let one idle tenant save up a burst nobody sized for. */
export const MAX_WINDOW_SECONDS = 86_400;
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

export const NO_RATE_LIMIT: RatePolicy = { quota: 0, windowSeconds: 1 };

/**
 * `20000/10s`, `60/1h`, `5/1m`, or `0` (no limit): the form used in the environment and the CLI.
 * Returns the reason as a string when the text is not a rate.
 */
export function parseRate(text: string): RatePolicy | string {
  const t = text.trim();
  if (t === '0') return NO_RATE_LIMIT;
  const m = /^(\d{1,10})\s*\/\s*(\d{1,6})?\s*([smhd])$/.exec(t);
  if (!m) return `'${text}' is not a rate like 20000/10s, 60/1h or 0 (no limit)`;
  const quota = Number(m[1]);
  const windowSeconds = Number(m[2] ?? '1') * UNIT_SECONDS[m[3]];
  return checkRate({ quota, windowSeconds }) ?? { quota, windowSeconds };
}

export function formatRate(p: RatePolicy): string {
  if (p.quota === 0) return '0';
  for (const unit of ['d', 'h', 'm'] as const) {
    if (p.windowSeconds % UNIT_SECONDS[unit] === 0) return `${p.quota}/${p.windowSeconds / UNIT_SECONDS[unit]}${unit}`;
  }
  return `${p.quota}/${p.windowSeconds}s`;
}

function checkRate(p: RatePolicy): string | undefined {
  if (!Number.isSafeInteger(p.quota) || p.quota < 0 || p.quota > MAX_QUOTA) return `the quota must be an integer from 0 to ${MAX_QUOTA}`;
  if (!Number.isSafeInteger(p.windowSeconds) || p.windowSeconds < 1 || p.windowSeconds > MAX_WINDOW_SECONDS) {
    return `the window must be a whole number of seconds from 1 to ${MAX_WINDOW_SECONDS}`;
  }
  return undefined;
}

/**
 * A tenant's overrides as the admin API takes them: rates as `{quota, windowSeconds}`, the others
 * as integers. Unlike event bodies, an unknown name is refused: a misspelt limit silently left at
 * its default is exactly the mistake an operator must hear about.
 */
export function parseOverrides(input: unknown): LimitOverrides {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw validationFailed('limits', 'must be an object of limit overrides');
  const out: LimitOverrides = {};
  for (const [name, value] of Object.entries(input as Record<string, unknown>)) {
    if ((RATE_LIMIT_NAMES as readonly string[]).includes(name)) {
      const v = value as { quota?: unknown; windowSeconds?: unknown } | null;
      const rate = { quota: v?.quota as number, windowSeconds: v?.windowSeconds as number };
      const problem = typeof v === 'object' && v !== null ? checkRate(rate) : 'must be {quota, windowSeconds}';
      if (problem) throw validationFailed(name, problem);
      out[name as (typeof RATE_LIMIT_NAMES)[number]] = rate;
    } else if ((COUNT_LIMIT_NAMES as readonly string[]).includes(name)) {
      if (!Number.isSafeInteger(value) || (value as number) < 0 || (value as number) > MAX_QUOTA) {
        throw validationFailed(name, `must be an integer from 0 (no limit) to ${MAX_QUOTA}`);
      }
      out[name as (typeof COUNT_LIMIT_NAMES)[number]] = value as number;
    } else {
      throw validationFailed(name, `is not a limit; the limits are ${LIMIT_NAMES.join(', ')}`);
    }
  }
  return out;
}

const RATE_SCHEMA = object(
  {
    quota: integer({ minimum: 0, maximum: MAX_QUOTA, description: '0: no limit' }),
    windowSeconds: integer({ minimum: 1, maximum: MAX_WINDOW_SECONDS }),
  },
  {},
  { additionalProperties: false },
);
const COUNT_SCHEMA = integer({ minimum: 0, maximum: MAX_QUOTA, description: '0: no limit' });
const limitsSchema = (extra: JsonSchema) =>
  object(
    {},
    Object.fromEntries([...RATE_LIMIT_NAMES.map((n) => [n, RATE_SCHEMA]), ...COUNT_LIMIT_NAMES.map((n) => [n, COUNT_SCHEMA])]),
    extra,
  );

/** What parseOverrides accepts (PUT /admin/tenants/{id}/limits): an unknown name is refused. */
export const LIMIT_OVERRIDES_SCHEMA = limitsSchema({ additionalProperties: false });
/** Every limit (the defaults, or what applies to a tenant). */
export const TENANT_LIMITS_SCHEMA = { ...limitsSchema({}), required: [...LIMIT_NAMES] };

/** One override in the CLI's form (`appendRequests=100/1s`, `streams=20`). */
export function parseOverrideText(name: string, text: string): LimitOverrides {
  if ((RATE_LIMIT_NAMES as readonly string[]).includes(name)) {
    const rate = parseRate(text);
    if (typeof rate === 'string') throw validationFailed(name, rate);
    return { [name]: rate };
  }
  const n = /^\d{1,10}$/.test(text.trim()) ? Number(text) : NaN;
  return parseOverrides({ [name]: n });
}

export function effectiveLimits(defaults: TenantLimits, overrides: LimitOverrides): TenantLimits {
  return { ...defaults, ...overrides };
}
