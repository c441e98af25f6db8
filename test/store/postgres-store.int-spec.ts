import { PostgresStore } from '../../src/store/postgres/postgres-store';
import { Store } from '../../src/store/store.port';
import { ThrowawayPostgres } from '../support/throwaway-postgres';
import { testEventStore } from './event-store.conformance';

let pg: ThrowawayPostgres;
const urls = new Map<Store, string>();

beforeAll(async () => {
  pg = await ThrowawayPostgres.start();
}, 120_000);
afterAll(async () => {
  await pg?.stop();
});

testEventStore('postgres', {
  concurrentInstances: true,
  async fresh() {
    const url = await pg.createDatabase();
    const store = new PostgresStore({ connectionString: url });
    await store.migrate();
    urls.set(store, url);
    return store;
  },
  async sameStorage(of, options) {
    const url = urls.get(of)!;
    const store = new PostgresStore({ connectionString: url, beforeCommit: options?.beforeCommit });
    await store.migrate();
    urls.set(store, url);
    return store;
  },
});
