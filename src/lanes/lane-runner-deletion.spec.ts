import { RawJson } from '../common/raw-json';
import { REMOVED_STATE } from '../store/notification-repository.port';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import { LaneKeyCap } from './lane-key-cap';
import { LaneRunner } from './lane-runner';

/**
 * A key's state removed by its projection (IDeletableProjection: the host answers JSON null for that
 * event): the lane stores no state, the notification says `deleted: true`, and the key limit stops
 * counting the key. A real in-memory store; the executor is a stand-in that removes on `CartCheckedOut`.
 */
describe('LaneRunner, a removed key', () => {
  async function world() {
    const store = new SqliteStore({ file: ':memory:' });
    await store.migrate();
    await store.tenants.createTenant({ tenantId: 't', name: 't', createdAt: 1 });
    await store.projections.deploy({
      tenantId: 't',
      projectionId: 'p',
      name: 'open-carts',
      version: { tenantId: 't', versionId: 'v', projectionId: 'p', className: 'C', targetPosition: 0, createdAt: 1 },
    });
    const append = (aggregateId: string, ...types: string[]) =>
      store.events.appendMany([
        { tenantId: 't', aggregateId, inferredType: 'cart', events: types.map((eventType) => ({ eventType, data: '{}' })) },
      ]);
    // Items counted; CartCheckedOut removes (JSON null), and the next event starts from a new state.
    const runtime = {
      resolveKeys: async () => [],
      apply: async (_t: string, _v: string, _c: string, groups: { state: RawJson | null; events: { eventType: string }[] }[]) =>
        groups.map((g) => {
          let items: number | null = g.state ? JSON.parse(g.state.text).items : 0;
          return {
            ok: true as const,
            states: g.events.map((e) => {
              if (e.eventType === 'CartCheckedOut') return ((items = null), 'null');
              return JSON.stringify({ items: (items = (items ?? 0) + 1) });
            }),
          };
        }),
    };
    const runner = new LaneRunner(store.lanes, store.projections, runtime, { batch: 100, backoffMs: [10] });
    return { store, append, runner };
  }

  it('stores no state, keeps the checkpoint, and logs the removal as its notification (state JSON null)', async () => {
    const { store, append, runner } = await world();
    await append('cart-1', 'ItemAdded', 'ItemAdded', 'CartCheckedOut');
    const v = { tenantId: 't', versionId: 'v' };
    const lane = { ...v, key: 'cart-1' };
    await store.lanes.inbox.route(
      v,
      [1, 2, 3].map((position) => ({ key: 'cart-1', position })),
      3,
    );
    expect(await runner.run(lane)).toEqual({ status: 'idle' });
    expect(await store.lanes.reads.getLane(lane)).toMatchObject({ state: null, appliedPosition: 3 });

    const log = await store.notifications.read('t', 'p', 0, 10);
    expect(log.map((n) => [n.stateKey, n.version, n.state])).toEqual([
      ['cart-1', 1, '{"items":1}'],
      ['cart-1', 2, '{"items":2}'],
      ['cart-1', 3, REMOVED_STATE],
    ]);

    // The key comes back: its next event starts from a new state and it is a state again.
    await append('cart-1', 'ItemAdded');
    await store.lanes.inbox.route(v, [{ key: 'cart-1', position: 4 }], 4);
    expect(await runner.run(lane)).toEqual({ status: 'idle' });
    expect(await store.lanes.reads.getLane(lane)).toMatchObject({ state: '{"items":1}', appliedPosition: 4 });
    await store.close();
  });

  it('frees the key for the keysPerProjection limit: full, one removed, a new key fits', async () => {
    const { store, append, runner } = await world();
    const cap = new LaneKeyCap(store.lanes.inbox, { keysPerProjection: async () => 2 });
    const v = { tenantId: 't', versionId: 'v' };
    await append('cart-1', 'ItemAdded');
    await append('cart-2', 'ItemAdded');
    const first = await cap.admit('t', 'v', [
      { key: 'cart-1', position: 1 },
      { key: 'cart-2', position: 2 },
    ]);
    await store.lanes.inbox.route(v, first.items, 2);
    expect((await cap.admit('t', 'v', [{ key: 'cart-3', position: 3 }])).refused?.error).toMatch(/^KEY_LIMIT/);

    await append('cart-1', 'CartCheckedOut');
    await store.lanes.inbox.route(v, [{ key: 'cart-1', position: 3 }], 3);
    expect(await runner.run({ ...v, key: 'cart-1' })).toEqual({ status: 'idle' });
    expect(await cap.admit('t', 'v', [{ key: 'cart-3', position: 4 }])).toEqual({ items: [{ key: 'cart-3', position: 4 }], refused: null });
    await store.close();
  });
});
