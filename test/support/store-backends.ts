import { ThrowawayPostgres } from './throwaway-postgres';

/**
 * The two stores an e2e suite runs against. PostgreSQL is started on first use and stopped by
 * `stopBackends` in afterAll; a missing server fails the suite rather than skipping it.
 */
export const STORE_BACKENDS = ['sqlite', 'postgres'] as const;
export type StoreBackend = (typeof STORE_BACKENDS)[number];

let pg: Promise<ThrowawayPostgres> | undefined;

export async function envFor(backend: StoreBackend): Promise<Record<string, string>> {
  if (backend === 'sqlite') return {};
  pg ??= ThrowawayPostgres.start();
  return { DATABASE_URL: await (await pg).createDatabase('e2e') };
}

export async function stopBackends(): Promise<void> {
  if (pg) await (await pg).stop();
  pg = undefined;
}
