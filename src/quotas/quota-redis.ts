import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { RedisCircuit } from './redis-circuit';

/** How long a quota command may take before the decision is made locally instead. */
const COMMAND_TIMEOUT_MS = 250;
const CONNECT_WAIT_MS = 5_000;

/**
 * The quotas' own Redis connection. Commands never queue while Redis is away (no offline queue,
 * no retries, a short timeout): a request must not wait on Redis, it is decided per instance
 * instead (RedisCircuit) until the connection is back; ioredis reconnects by itself.
 */
export async function connectQuotaRedis(url: string): Promise<{ redis: Redis; circuit: RedisCircuit }> {
  const logger = new Logger('Quotas');
  const redis = new Redis(url, {
    connectionName: 'es:quotas',
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
  });
  redis.on('error', () => undefined); // RedisCircuit reports failures, throttled
  const ready = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), CONNECT_WAIT_MS);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  if (!ready) logger.warn(`redis at start: not reachable within ${CONNECT_WAIT_MS} ms; quotas are counted per instance until it is`);
  return { redis, circuit: new RedisCircuit() };
}
