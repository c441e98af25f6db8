import { AppendOutcome, AppendRequest } from '../../src/store/event-log.port';
import { Store } from '../../src/store/store.port';
import type { StoreHarness } from './store-fixtures';
import { heldCommit, req, tenant } from './store-fixtures';
import { elapse } from '../support/wait';

/** A keyed append request: `hash` stands for the digest of route and body, `notBefore` for the retention's start. */
const keyed = (t: string, aggregateId: string, key: string, hash = 'h1', over: Partial<AppendRequest> = {}): AppendRequest =>
  req(t, aggregateId, { idempotency: { key, requestHash: hash, notBefore: 0 }, ...over });

const ids = (o: AppendOutcome) => (o.ok ? o.result.events.map((e) => [e.eventId, e.version, e.position, e.timestamp]) : o.error.code);

/**
 * Idempotency keys of appends (README "Retrying appends safely"): remembered in the append's own
 * transaction; a repeat is a replay that stores nothing; another request with the key is refused;
 * two instances racing one key store once. Part of the event store's conformance suite, both stores.
 */
export function describeIdempotencyStore(current: () => Store, harness: StoreHarness, extra: Store[]): void {
  describe('idempotency keys', () => {
    it('replays a remembered key with the events stored the first time, storing nothing', async () => {
      const store = current();
      const t = await tenant(store, 't1');
      const [first] = await store.events.appendMany([
        keyed(t, 'order-1', 'k1', 'h1', {
          events: [
            { eventType: 'A', data: '{}' },
            { eventType: 'B', data: '{}' },
          ],
        }),
      ]);
      expect(first.ok && first.result.replay).toBeUndefined();
      const [again] = await store.events.appendMany([keyed(t, 'order-1', 'k1', 'h1', { expectedVersion: 0 })]);
      expect(again.ok && again.result.replay).toEqual({ outcome: null });
      expect(ids(again)).toEqual(ids(first));
      expect(again.ok && again.result).toMatchObject({ aggregateId: 'order-1', aggregateType: 'order' });
      expect(await store.events.headPosition(t)).toBe(2);
      expect(await store.events.streamInfo(t, 'order-1')).toEqual({ aggregateType: 'order', version: 2 });
    });

    it('refuses the key with another request, keeps keys per tenant, and remembers the outcome given', async () => {
      const store = current();
      const t = await tenant(store, 't1');
      const u = await tenant(store, 't2');
      const outcome = JSON.stringify({ state: '{"total":79.90}' });
      await store.events.appendMany([
        keyed(t, 'acct-1', 'k', 'h1', { idempotency: { key: 'k', requestHash: 'h1', notBefore: 0, outcome } }),
      ]);
      const [reused] = await store.events.appendMany([keyed(t, 'acct-1', 'k', 'h2')]);
      expect(!reused.ok && [reused.error.code, reused.error.details]).toEqual(['IDEMPOTENCY_KEY_REUSED', { idempotencyKey: 'k' }]);
      const [replay] = await store.events.appendMany([keyed(t, 'acct-1', 'k', 'h1')]);
      expect(replay.ok && replay.result.replay).toEqual({ outcome });
      // Another tenant's same key is its own.
      const [other] = await store.events.appendMany([keyed(u, 'acct-1', 'k', 'h2')]);
      expect(other.ok && other.result.replay).toBeUndefined();
      expect([await store.events.headPosition(t), await store.events.headPosition(u)]).toEqual([1, 1]);
    });

    it('answers a key twice in one group commit: the second is a replay of the first (or refused), a refused request takes no key', async () => {
      const store = current();
      const t = await tenant(store, 't1');
      const out = await store.events.appendMany([
        keyed(t, 'x-1', 'dup'),
        keyed(t, 'x-1', 'dup'),
        keyed(t, 'y-1', 'dup', 'h2'),
        keyed(t, 'z-1', 'bad', 'h1', { expectedVersion: 7 }),
        keyed(t, 'z-1', 'bad', 'h1'),
      ]);
      expect(out.map((o) => (o.ok ? (o.result.replay ? 'replay' : 'stored') : o.error.code))).toEqual([
        'stored',
        'replay',
        'IDEMPOTENCY_KEY_REUSED',
        'VERSION_CONFLICT',
        'stored',
      ]);
      expect(ids(out[1])).toEqual(ids(out[0]));
      expect(await store.events.headPosition(t)).toBe(2);
      const [later] = await store.events.appendMany([keyed(t, 'x-1', 'dup')]);
      expect(ids(later)).toEqual(ids(out[0]));
    });

    it('treats a key older than notBefore as unknown and takes it over; the sweep deletes expired keys of every tenant', async () => {
      const store = current();
      const t = await tenant(store, 't1');
      const u = await tenant(store, 't2');
      const [old] = await store.events.appendMany([keyed(t, 'e-1', 'k-old')]);
      await store.events.appendMany([keyed(u, 'e-1', 'k-old')]);
      const cut = Date.now() + 1;
      while (Date.now() <= cut) await elapse(2, 'until the clock passes the cut');
      const expired = { key: 'k-old', requestHash: 'h1', notBefore: cut };
      const [fresh] = await store.events.appendMany([req(t, 'e-1', { idempotency: expired })]);
      expect(fresh.ok && [fresh.result.replay, fresh.result.events[0].version]).toEqual([undefined, 2]);
      const [replay] = await store.events.appendMany([req(t, 'e-1', { idempotency: expired })]);
      expect(ids(replay)).toEqual(ids(fresh));
      expect(ids(replay)).not.toEqual(ids(old));
      // t's key is younger than the cut now, u's is not.
      expect(await store.idempotencyKeys.deleteExpired(cut, 100)).toBe(1);
      expect(await store.idempotencyKeys.deleteExpired(cut, 100)).toBe(0);
      const [stillT] = await store.events.appendMany([req(t, 'e-1', { idempotency: expired })]);
      expect(ids(stillT)).toEqual(ids(fresh));
      const [newU] = await store.events.appendMany([keyed(u, 'e-1', 'k-old')]);
      expect(newU.ok && [newU.result.replay, newU.result.events[0].version]).toEqual([undefined, 2]);
    });

    it('stores once when several connections race one key; every answer is the same', async () => {
      const store = current();
      const t = await tenant(store, 't1');
      const writers = [store];
      if (harness.concurrentInstances) {
        const s = await harness.sameStorage(store);
        extra.push(s);
        writers.push(s);
      }
      const calls = Array.from({ length: 12 }, (_, i) => writers[i % writers.length].events.appendMany([keyed(t, 'race-1', 'k-race')]));
      const results = (await Promise.all(calls)).flat();
      expect(results.every((r) => r.ok)).toBe(true);
      expect(results.filter((r) => r.ok && !r.result.replay)).toHaveLength(1);
      expect(new Set(results.map((r) => JSON.stringify(ids(r)))).size).toBe(1);
      expect(await store.events.headPosition(t)).toBe(1);
    });

    if (harness.concurrentInstances) {
      it('answers the loser of a key race with the winner’s events once the winner commits', async () => {
        const store = current();
        const t = await tenant(store, 't1');
        const { slow, fast, inside, release } = await heldCommit(harness, store, extra);
        const winner = slow.events.appendMany([keyed(t, 'w-1', 'k-held')]);
        await inside; // the key is written, not committed: the other instance's look-up cannot see it
        const loser = fast.events.appendMany([keyed(t, 'l-1', 'k-held')]);
        await elapse(200, "the loser waits on the winner's key, not past it");
        release();
        const [w] = await winner;
        const [l] = await loser;
        expect(w.ok && w.result.replay).toBeUndefined();
        expect(l.ok && l.result.replay).toEqual({ outcome: null });
        expect(ids(l)).toEqual(ids(w));
        expect(l.ok && l.result.aggregateId).toBe('w-1');
        expect(await store.events.streamInfo(t, 'l-1')).toBeNull();
        expect(await store.events.headPosition(t)).toBe(1);
      });
    }
  });
}
