import Redis from 'ioredis';
import { redactSecrets } from '../common/redact';
import { ReadinessCheck } from './readiness';

/** A readiness check with a connection of its own to close at shutdown. */
export interface ClosableReadinessCheck extends ReadinessCheck {
  close(): Promise<void>;
}

/** A readiness check whose last answer is also a metric (eventstore_dependency_up). */
export interface RedisReadinessCheck extends ClosableReadinessCheck {
  /** PINGs Redis now: true when it answers. */
  up(): Promise<boolean>;
}

/**
 * What this instance loses while Redis is down (said in the section of a degraded answer, and in
 * docs/operations.md, "Several instances"). Appends, reads and state reads do not use Redis.
 */
export const REDIS_DOWN_EFFECTS = [
  'projection lanes (BullMQ): no lane is queued or run until Redis is back, so projection states, notifications and webhooks wait; nothing is lost (the store sweep wakes every lane with work)',
  'tenant quotas: rates and stream/webhook slots are counted per instance, not shared across instances',
  'cross-instance wake-ups: a stream or webhook on another instance than the lane that wrote a notification learns of it later',
];

/**
 * Redis answers PING on a connection of the health module's own: the lanes' and quotas' clients
 * queue or fail over (quotas fall back to per-instance counts), so their state says little, and a
 * probe must not wait behind their traffic. No offline queue and no retry: down is said at once.
 *
 * Redis down leaves the instance ready but degraded: appends and reads go on without it, and every
 * instance shares the one Redis, so a 503 would take the whole service out of its load balancer at
 * once. What is degraded is listed in the section (REDIS_DOWN_EFFECTS).
 */
export function redisReadiness(url: string): RedisReadinessCheck {
  const redis = new Redis(url, {
    connectionName: 'es:health',
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 1_000,
  });
  // Reconnection is ioredis's own business; an error is reported by the next PING, not thrown.
  redis.on('error', () => undefined);
  const ping = async (): Promise<string | null> => {
    try {
      if (redis.status === 'wait' || redis.status === 'end') await redis.connect();
      await redis.ping();
      return null;
    } catch (e) {
      return redactSecrets(e instanceof Error ? e.message : String(e));
    }
  };
  return {
    name: 'redis',
    check: async () => {
      const error = await ping();
      if (error === null) return { ready: true, detail: { reachable: true } };
      return { ready: true, degraded: true, detail: { reachable: false, error, effects: REDIS_DOWN_EFFECTS } };
    },
    up: async () => (await ping()) === null,
    close: async () => {
      redis.disconnect();
    },
  };
}
