import { Store } from '../../src/store/store.port';
import { req, tenant } from './store-fixtures';

/**
 * Issue 27 item 7 in the store, on every adapter: an append the reducer refused (AppendRequest.refusal)
 * stores nothing, its idempotency key included, and answers the refusal after the commit's own checks;
 * SnapshotRepository.listFailed lists the aggregates held at a failed event under one binding, with
 * the failed event, in id order. Part of testEventStore, run on the store its beforeEach opened.
 */
export function describeFailedStates(current: () => Store): void {
  let store: Store;
  beforeEach(() => {
    store = current();
  });

  const refusal = { code: 'REDUCER_REJECTED' as const, message: 'insufficient funds', details: { eventIndex: 1, eventType: 'B' } };
  const twoEvents = [
    { eventType: 'A', data: '{}' },
    { eventType: 'B', data: '{}' },
  ];

  it('refuses an append the reducer refused: nothing stored, no key remembered, the error as given', async () => {
    const t = await tenant(store, 't1');
    const snapshot = (baseVersion: number) => ({ bindingId: 'b1', baseVersion, state: '{"n":1}' });
    await store.events.appendMany([req(t, 'acct-1', { snapshot: snapshot(0) })]);
    const idempotency = { key: 'k', requestHash: 'h', notBefore: 0 };
    const [refused] = await store.events.appendMany([req(t, 'acct-1', { events: twoEvents, snapshot: snapshot(1), refusal, idempotency })]);
    expect(!refused.ok && [refused.error.code, refused.error.message, refused.error.details]).toEqual([
      'REDUCER_REJECTED',
      'insufficient funds',
      { eventIndex: 1, eventType: 'B' },
    ]);
    expect(await store.events.streamInfo(t, 'acct-1')).toEqual({ aggregateType: 'acct', version: 1 });
    expect(await store.events.headPosition(t)).toBe(1);
    expect(await store.snapshots.get(t, 'acct-1')).toMatchObject({ version: 1, state: '{"n":1}' });
    // The key remembered nothing: the same key, now accepted, is stored (not a replay) …
    const [accepted] = await store.events.appendMany([req(t, 'acct-1', { events: twoEvents, snapshot: snapshot(1), idempotency })]);
    expect(accepted.ok && [accepted.result.replay, accepted.result.events.map((e) => e.version)]).toEqual([undefined, [2, 3]]);
    // … and from then on a retry is its replay, even one the reducer would refuse now.
    const [replay] = await store.events.appendMany([req(t, 'acct-1', { events: twoEvents, snapshot: snapshot(3), refusal, idempotency })]);
    expect(replay.ok && replay.result.replay !== undefined).toBe(true);
    // A stale base outranks the refusal (the keeper recomputes), and so does expectedVersion.
    const [stale] = await store.events.appendMany([req(t, 'acct-1', { snapshot: snapshot(1), refusal })]);
    expect(!stale.ok && stale.error.code).toBe('STATE_STALE');
    const [conflict] = await store.events.appendMany([req(t, 'acct-1', { expectedVersion: 1, snapshot: snapshot(3), refusal })]);
    expect(!conflict.ok && conflict.error.code).toBe('VERSION_CONFLICT');
    expect(await store.events.streamInfo(t, 'acct-1')).toEqual({ aggregateType: 'acct', version: 3 });
  });

  it('lists the aggregates held at a failed event under a binding, with that event, in id order and by pages', async () => {
    const t = await tenant(store, 't1');
    const other = await tenant(store, 't2');
    const held = (baseVersion: number, failedVersion: number, bindingId = 'b1') => ({
      bindingId,
      baseVersion,
      state: '{}',
      failedVersion,
      error: 'APPLY_FAILED: no',
    });
    const out = await store.events.appendMany([
      req(t, 'acct-3', { events: twoEvents, snapshot: held(0, 2) }),
      req(t, 'acct-1', { events: twoEvents, snapshot: held(0, 1) }),
      req(t, 'acct-2', { snapshot: { bindingId: 'b1', baseVersion: 0, state: '{}' } }), // folded fine
      req(t, 'acct-4', { snapshot: held(0, 1, 'b0') }), // under an earlier binding
      req(t, 'cart-1', { snapshot: held(0, 1) }), // another type
      req(other, 'acct-1', { snapshot: held(0, 1) }), // another tenant
    ]);
    expect(out.every((o) => o.ok)).toBe(true);
    // One computed outside an append (a catch-up, a read) is listed too.
    await store.events.appendMany([req(t, 'acct-5')]);
    const [five] = await store.events.readStream(t, 'acct-5', 1, 1);
    await store.snapshots.putIfNewer(t, {
      aggregateId: 'acct-5',
      aggregateType: 'acct',
      bindingId: 'b1',
      version: 1,
      state: '{}',
      failedVersion: 1,
      error: 'STATE_TOO_LARGE: big',
      updatedAt: 5_000,
    });

    const all = await store.snapshots.listFailed(t, 'acct', 'b1', '', 10);
    expect(all.map((a) => [a.aggregateId, a.version, a.failedVersion, a.eventType])).toEqual([
      ['acct-1', 2, 1, 'A'],
      ['acct-3', 2, 2, 'B'],
      ['acct-5', 1, 1, 'Happened'],
    ]);
    const [one] = await store.events.readStream(t, 'acct-1', 1, 1);
    expect(all[0]).toEqual({
      aggregateId: 'acct-1',
      version: 2,
      failedVersion: 1,
      error: 'APPLY_FAILED: no',
      eventId: one.eventId,
      eventType: 'A',
      updatedAt: one.timestamp,
    });
    expect(all[2]).toMatchObject({ eventId: five.eventId, error: 'STATE_TOO_LARGE: big', updatedAt: 5_000 });
    expect((await store.snapshots.listFailed(t, 'acct', 'b1', '', 1)).map((a) => a.aggregateId)).toEqual(['acct-1']);
    expect((await store.snapshots.listFailed(t, 'acct', 'b1', 'acct-1', 1)).map((a) => a.aggregateId)).toEqual(['acct-3']);
    expect(await store.snapshots.listFailed(t, 'acct', 'b1', 'acct-5', 10)).toEqual([]);
    expect((await store.snapshots.listFailed(t, 'acct', 'b0', '', 10)).map((a) => a.aggregateId)).toEqual(['acct-4']);

    // A fixed reducer's catch-up (another binding) replaces the failed state.
    await store.snapshots.putIfNewer(t, {
      aggregateId: 'acct-1',
      aggregateType: 'acct',
      bindingId: 'b2',
      version: 2,
      state: '{"ok":true}',
      failedVersion: null,
      error: null,
      updatedAt: 6_000,
    });
    expect((await store.snapshots.listFailed(t, 'acct', 'b1', '', 10)).map((a) => a.aggregateId)).toEqual(['acct-3', 'acct-5']);
    expect(await store.snapshots.listFailed(t, 'acct', 'b2', '', 10)).toEqual([]);
    // An erased aggregate's snapshot goes with it.
    await store.erasure.erase(t, 'acct-3');
    expect((await store.snapshots.listFailed(t, 'acct', 'b1', '', 10)).map((a) => a.aggregateId)).toEqual(['acct-5']);
  });
}
