import { ThrowawayPostgres } from './throwaway-postgres';
import { ThrowawayRedis } from './throwaway-redis';

/**
 * The two stores an e2e suite runs against. PostgreSQL is started on first use and stopped by
 * `stopBackends` in afterAll; a missing server fails the suite rather than skipping it.
 */
export const STORE_BACKENDS = ['sqlite', 'postgres'] as const;
export type StoreBackend = (typeof STORE_BACKENDS)[number];

let pg: Promise<ThrowawayPostgres> | undefined;
let redis: Promise<ThrowawayRedis> | undefined;

/** The two lane inbox backends: in-process by default, BullMQ on a Redis the tests start. */
export const SCHEDULER_BACKENDS = ['in-process', 'bullmq'] as const;
export type SchedulerBackend = (typeof SCHEDULER_BACKENDS)[number];

export async function schedulerEnv(backend: SchedulerBackend): Promise<Record<string, string>> {
  if (backend === 'in-process') return {};
  redis ??= ThrowawayRedis.start();
  return { REDIS_URL: (await redis).url };
}

export async function envFor(backend: StoreBackend): Promise<Record<string, string>> {
  if (backend === 'sqlite') return {};
  pg ??= ThrowawayPostgres.start();
  return { DATABASE_URL: await (await pg).createDatabase('e2e') };
}

/** The shared PostgreSQL server (started if needed), for tests that crash and restart it. */
export async function postgresServer(): Promise<ThrowawayPostgres> {
  pg ??= ThrowawayPostgres.start();
  return pg;
}

export async function stopBackends(): Promise<void> {
  if (pg) await (await pg).stop();
  if (redis) await (await redis).stop();
  pg = undefined;
  redis = undefined;
}
