import Redis from 'ioredis';
import { redactSecrets } from '../common/redact';
import { ReadinessCheck } from './readiness';

/** A readiness check with a connection of its own to close at shutdown. */
export interface ClosableReadinessCheck extends ReadinessCheck {
  close(): Promise<void>;
}

/**
 * Redis answers PING on a connection of the health module's own: the lanes' and quotas' clients
 * queue or fail over (quotas fall back to per-instance counts), so their state says little, and a
 * probe must not wait behind their traffic. No offline queue and no retry: down is said at once.
 */
export function redisReadiness(url: string): ClosableReadinessCheck {
  const redis = new Redis(url, {
    connectionName: 'es:health',
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 1_000,
  });
  // Reconnection is ioredis's own business; an error is reported by the next PING, not thrown.
  redis.on('error', () => undefined);
  return {
    name: 'redis',
    check: async () => {
      try {
        if (redis.status === 'wait' || redis.status === 'end') await redis.connect();
        await redis.ping();
        return { ready: true, detail: { reachable: true } };
      } catch (e) {
        return { ready: false, detail: { reachable: false, error: redactSecrets(e instanceof Error ? e.message : String(e)) } };
      }
    },
    close: async () => {
      redis.disconnect();
    },
  };
}
