import { LaneWorld } from '../support/memory-lane-world';
import { req, tenant } from './store-fixtures';

/**
 * A key whose state its projection removed (IDeletableProjection; issue 27, item 8): the lane stores no
 * state, keeps its row and checkpoint, and stops counting against keysPerProjection until an event of
 * the key is routed again. Run on SQLite, PostgreSQL (event-store.conformance.ts) and the in-memory lane
 * roles (memory-lanes.int-spec.ts).
 */
export function describeLaneDeletion(current: () => LaneWorld): void {
  it('a removed key keeps its checkpoint, answers no state, and is not counted until an event of it is routed again', async () => {
    const store = current();
    const t = await tenant(store, 'del');
    await store.events.appendMany([1, 2, 3].map((i) => req(t, `cart-${i}`)));
    const v = { tenantId: t, versionId: 'dv1' };
    await store.projections.deploy({
      tenantId: t,
      projectionId: 'dp1',
      name: 'open-carts',
      version: { ...v, projectionId: 'dp1', className: 'C', targetPosition: 0, createdAt: 1 },
    });
    const a = { ...v, key: 'a' };
    await store.lanes.inbox.route(
      v,
      [
        { key: 'a', position: 1 },
        { key: 'b', position: 2 },
        { key: '!unresolved', position: 3 },
      ],
      3,
    );
    expect(await store.lanes.inbox.keyCount(v)).toBe(2);
    expect(await store.lanes.runs.applied(a, { state: null, fromPosition: 0, appliedPosition: 1, updatedAt: 5 })).toBe(true);

    expect(await store.lanes.reads.getLane(a)).toMatchObject({ state: null, appliedPosition: 1 });
    expect(await store.lanes.inbox.keyCount(v)).toBe(1); // b only: not yet applied, still a key
    expect([...(await store.lanes.inbox.existingKeys(v, ['a', 'b']))]).toEqual(['b']);
    expect((await store.lanes.reads.listLanes(v, { afterKey: '', limit: 10 })).map((l) => l.key)).toEqual([]);
    expect((await store.lanes.reads.lag(v)).laneCount).toBe(0);

    // The removed event routed twice (another instance's router): the kept checkpoint ignores it.
    await store.lanes.inbox.route(v, [{ key: 'a', position: 1 }], 3);
    expect(await store.lanes.inbox.keyCount(v)).toBe(1);
    expect((await store.lanes.runs.laneWork(a, 10))!.events).toEqual([]);

    // A new event of the key: it counts again at once, and its lane applies it from the kept checkpoint.
    await store.lanes.inbox.route(v, [{ key: 'a', position: 3 }], 3);
    expect(await store.lanes.inbox.keyCount(v)).toBe(2);
    expect([...(await store.lanes.inbox.existingKeys(v, ['a', 'b']))].sort()).toEqual(['a', 'b']);
    const work = (await store.lanes.runs.laneWork(a, 10))!;
    expect(work.lane).toMatchObject({ state: null, appliedPosition: 1 });
    expect(work.events.map((e) => e.position)).toEqual([3]);
    expect(await store.lanes.runs.applied(a, { state: '{"items":1}', fromPosition: 1, appliedPosition: 3, updatedAt: 6 })).toBe(true);
    expect(await store.lanes.inbox.keyCount(v)).toBe(2);
    expect(await store.lanes.reads.getLane(a)).toMatchObject({ state: '{"items":1}', appliedPosition: 3 });
    expect((await store.lanes.reads.lag(v)).laneCount).toBe(1);
  });
}
