import { AppendRequest } from '../../src/store/event-log.port';
import { PostgresStore } from '../../src/store/postgres/postgres-store';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store';
import { Store } from '../../src/store/store.port';

/** Shared by the store's conformance suites: an append of one event, and a tenant to append it to. */
export const req = (tenantId: string, aggregateId: string, over: Partial<AppendRequest> = {}): AppendRequest => ({
  tenantId,
  aggregateId,
  inferredType: aggregateId.split('-')[0],
  events: [{ eventType: 'Happened', data: '{"n":1}' }],
  ...over,
});

export async function tenant(store: { tenants: Pick<Store['tenants'], 'createTenant'> }, id: string): Promise<string> {
  await store.tenants.createTenant({ tenantId: id, name: `tenant ${id}`, createdAt: Date.now() });
  return id;
}

/** A query straight on the storage (one statement: one consistent view on both stores); `?` placeholders on both. */
export async function rawAll<T>(store: Store, sql: string, params: unknown[]): Promise<T[]> {
  if (store.kind === 'postgres') {
    let i = 0;
    return (
      await (store as PostgresStore).pool.query(
        sql.replace(/\?/g, () => `$${++i}`),
        params,
      )
    ).rows as T[];
  }
  return (store as SqliteStore).db.prepare(sql).all(...params) as T[];
}

/**
 * Two more instances on the same storage: `slow` holds each commit open, its rows written, until
 * `release()` (`inside` resolves once it is there), `fast` commits at once — what another instance
 * reads or writes while a transaction is still open.
 */
export async function heldCommit(harness: StoreHarness, store: Store, extra: Store[]) {
  let release!: () => void;
  let entered!: () => void;
  const inside = new Promise<void>((r) => (entered = r));
  const gate = new Promise<void>((r) => (release = r));
  const slow = await harness.sameStorage(store, {
    beforeCommit: async () => {
      entered();
      await gate;
    },
  });
  const fast = await harness.sameStorage(store);
  extra.push(slow, fast);
  return { slow, fast, inside, release };
}

/** How a conformance suite gets stores of one adapter. */
export interface StoreHarness {
  /** A migrated store on fresh, empty storage. */
  fresh(): Promise<Store>;
  /** Another store over the same storage (a second instance, or a reopen after close). */
  sameStorage(of: Store, options?: { beforeCommit?: (tenantIds: string[]) => Promise<void> }): Promise<Store>;
  /** Whether two instances can append concurrently (PostgreSQL); SQLite serialises writers in one process. */
  concurrentInstances: boolean;
}
