import { AppConfig } from '../config/app-config';
import { PostgresStore } from './postgres/postgres-store';
import { SqliteStore } from './sqlite/sqlite-store';
import { Store } from './store.port';

/** DATABASE_URL selects PostgreSQL; otherwise the embedded SQLite file in DATA_DIR. */
export async function openStore(config: Pick<AppConfig, 'databaseUrl' | 'dataDir' | 'lanePoolSize'>): Promise<Store> {
  const store = config.databaseUrl
    ? new PostgresStore({ connectionString: config.databaseUrl, lanePoolSize: config.lanePoolSize })
    : SqliteStore.inDataDir(config.dataDir);
  try {
    await store.migrate();
  } catch (e) {
    await store.close().catch(() => undefined);
    throw e;
  }
  return store;
}
