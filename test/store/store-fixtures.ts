import { AppendRequest } from '../../src/store/event-log.port';
import { Store } from '../../src/store/store.port';

/** Shared by the store's conformance suites: an append of one event, and a tenant to append it to. */
export const req = (tenantId: string, aggregateId: string, over: Partial<AppendRequest> = {}): AppendRequest => ({
  tenantId,
  aggregateId,
  inferredType: aggregateId.split('-')[0],
  events: [{ eventType: 'Happened', data: '{"n":1}' }],
  ...over,
});

export async function tenant(store: Store, id: string): Promise<string> {
  await store.tenants.createTenant({ tenantId: id, name: `tenant ${id}`, createdAt: Date.now() });
  return id;
}
