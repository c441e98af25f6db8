import { AppendRequest, StoredEvent } from '../../src/store/event-log.port';
import { Store } from '../../src/store/store.port';
import type { StoreHarness } from './store-fixtures';
import { heldCommit, rawAll, req, tenant } from './store-fixtures';
import { until } from '../support/wait';

/** An append of one event with these tags (and type). */
const tagged = (t: string, aggregateId: string, tags: string[], eventType = 'Happened', over: Partial<AppendRequest> = {}): AppendRequest =>
  req(t, aggregateId, { events: [{ eventType, data: '{"n":1}', tags }], ...over });

const positions = (events: StoredEvent[]) => events.map((e) => e.position);

/** A condition on events with all these tags (and one of these types) after `after`. */
const cond = (tags: string[], after?: number, types?: string[]) => ({
  failIfEventsMatch: { items: [{ tags, ...(types ? { types } : {}) }] },
  ...(after !== undefined ? { after } : {}),
});
const codeOf = (o: Awaited<ReturnType<Store['events']['appendMany']>>[number]) => (o.ok ? 'ok' : o.error.code);

/**
 * Issue 28 (DCB, docs/dcb.md) against the real engine: tags stored and read back exactly, reads of
 * the log by query, append conditions and multi-aggregate transactions in the group commit, tags
 * through erasure. Part of testEventStore, run inside its describe on the store its beforeEach opened.
 */
export function describeDcbStore(current: () => Store, harness: StoreHarness, extra: Store[]): void {
  let store: Store;
  beforeEach(() => {
    store = current();
  });

  describe('dcb: tags', () => {
    it('stores tags exactly (Unicode, order, JSON-looking text) and reads them back on every read; none: no tags field', async () => {
      const t = await tenant(store, 't1');
      const tags = ['student:\u00e9l\u00e8ve', 'course:7', '\u{1F680}', 'cafe\u0301', '"quoted",[x]', 'a'.repeat(200), 'b'];
      const out = await store.events.appendMany([
        req(t, 'acct-1', {
          events: [
            { eventType: 'A', data: '{}', tags },
            { eventType: 'B', data: '{}' },
            { eventType: 'C', data: '{}', tags: [] },
          ],
        }),
      ]);
      expect(out[0].ok && out[0].result.events.map((e) => e.tags)).toEqual([tags, undefined, undefined]);
      const reads = [
        await store.events.readStream(t, 'acct-1', 1, 10),
        await store.events.readAll(t, 0, 10),
        await store.events.readLog(t, { direction: 'forward', afterPosition: 0, limit: 10 }),
        (await store.events.readStreamBackward(t, 'acct-1', 3, 10)).reverse(),
      ];
      for (const events of reads) {
        expect(events[0].tags).toEqual(tags);
        expect('tags' in events[1]).toBe(false);
        expect('tags' in events[2]).toBe(false);
      }
      // The index has one row per (event, tag), at the event's position.
      const rows = await rawAll<{ tag: string; position: number | string }>(
        store,
        'SELECT tag, position FROM event_tags WHERE tenant_id = ? ORDER BY position, tag',
        [t],
      );
      expect(rows.map((r) => [r.tag, Number(r.position)]).sort()).toEqual(tags.map((g) => [g, 1]).sort());
    });

    it('keeps tags per tenant: the same tag in two tenants are two sets of rows', async () => {
      const a = await tenant(store, 'ta');
      const b = await tenant(store, 'tb');
      await store.events.appendMany([tagged(a, 'x-1', ['k']), tagged(b, 'x-1', ['k']), tagged(a, 'x-2', ['k'])]);
      const q = { items: [{ tags: ['k'] }] };
      expect(positions(await store.events.readLog(a, { direction: 'forward', afterPosition: 0, limit: 10, query: q }))).toEqual([1, 2]);
      expect(positions(await store.events.readLog(b, { direction: 'forward', afterPosition: 0, limit: 10, query: q }))).toEqual([1]);
    });
  });

  describe('dcb: reads by query', () => {
    /** 1 course-1 Opened [course:1]; 2 course-2 Opened [course:2]; 3 student-a Joined [course:1, student:a];
     *  4 student-b Joined [course:2, student:b]; 5 student-a Left [course:1, student:a]; 6 note-1 Noted (no tags). */
    async function course(t: string) {
      const out = await store.events.appendMany([
        tagged(t, 'course-1', ['course:1'], 'Opened'),
        tagged(t, 'course-2', ['course:2'], 'Opened'),
        tagged(t, 'student-a', ['course:1', 'student:a'], 'Joined'),
        tagged(t, 'student-b', ['student:b', 'course:2'], 'Joined'),
        tagged(t, 'student-a', ['student:a', 'course:1'], 'Left'),
        req(t, 'note-1', { events: [{ eventType: 'Noted', data: '{}' }] }),
      ]);
      expect(out.every((o) => o.ok)).toBe(true);
    }
    const read = (t: string, q: Partial<Parameters<Store['events']['readLog']>[1]>) =>
      store.events.readLog(t, { direction: 'forward', afterPosition: 0, limit: 100, ...q } as Parameters<Store['events']['readLog']>[1]);

    it('matches an item by all its tags and any of its types; items OR-ed, each event once, in position order', async () => {
      const t = await tenant(store, 't1');
      await course(t);
      expect(positions(await read(t, { query: { items: [{ tags: ['course:1'] }] } }))).toEqual([1, 3, 5]);
      expect(positions(await read(t, { query: { items: [{ tags: ['course:1', 'student:a'] }] } }))).toEqual([3, 5]);
      expect(positions(await read(t, { query: { items: [{ tags: ['student:a', 'course:2'] }] } }))).toEqual([]);
      expect(positions(await read(t, { query: { items: [{ types: ['Joined', 'Noted'] }] } }))).toEqual([3, 4, 6]);
      expect(positions(await read(t, { query: { items: [{ types: ['Joined'], tags: ['course:2'] }] } }))).toEqual([4]);
      // Overlapping items: 3 and 5 match both, each comes once.
      const both = { items: [{ tags: ['student:a'] }, { tags: ['course:1'] }, { types: ['Left', 'Opened'] }] };
      expect(positions(await read(t, { query: both }))).toEqual([1, 2, 3, 5]);
      expect(positions(await read(t, { query: both, direction: 'backward' }))).toEqual([5, 3, 2, 1]);
      // An item matching everything: the whole log.
      expect(positions(await read(t, { query: { items: [{ tags: ['nope'] }, {}] } }))).toEqual([1, 2, 3, 4, 5, 6]);
      // Unknown tag or type: nothing.
      expect(await read(t, { query: { items: [{ tags: ['nope'] }, { types: ['Nope'] }] } })).toEqual([]);
      // Rows as every read gives them.
      const [e] = await read(t, { query: { items: [{ tags: ['student:b'] }] } });
      expect(e).toEqual((await store.events.readAll(t, 3, 1))[0]);
      expect(e.tags).toEqual(['student:b', 'course:2']);
    });

    it('pages by cursor and limit both ways, AND-ed with the aggregate and event type filters', async () => {
      const t = await tenant(store, 't1');
      await course(t);
      const q = { items: [{ tags: ['course:1'] }, { tags: ['course:2'] }] };
      expect(positions(await read(t, { query: q, limit: 2 }))).toEqual([1, 2]);
      expect(positions(await read(t, { query: q, limit: 2, afterPosition: 2 }))).toEqual([3, 4]);
      expect(positions(await read(t, { query: q, limit: 2, afterPosition: 4 }))).toEqual([5]);
      expect(positions(await read(t, { query: q, limit: 2, afterPosition: 5 }))).toEqual([]);
      expect(positions(await read(t, { query: q, limit: 2, direction: 'backward' }))).toEqual([5, 4]);
      expect(positions(await read(t, { query: q, limit: 3, direction: 'backward', beforePosition: 4 }))).toEqual([3, 2, 1]);
      expect(positions(await read(t, { query: q, aggregateTypes: ['student'] }))).toEqual([3, 4, 5]);
      expect(positions(await read(t, { query: q, eventTypes: ['Opened', 'Left'] }))).toEqual([1, 2, 5]);
      expect(positions(await read(t, { query: q, eventTypes: ['Joined'], aggregateTypes: ['student'], direction: 'backward' }))).toEqual([
        4, 3,
      ]);
      expect(positions(await read(t, { query: { items: [{ types: ['Joined'] }] }, eventTypes: ['Opened'] }))).toEqual([]);
      expect(
        positions(await read(t, { query: { items: [{ types: ['Joined', 'Opened'] }] }, aggregateTypes: ['course'], limit: 1 })),
      ).toEqual([1]);
    });
  });

  describe('dcb: append conditions', () => {
    it('refuses when a matching event exists after `after` (its position in the error), accepts otherwise; nothing stored on refusal', async () => {
      const t = await tenant(store, 't1');
      await store.events.appendMany([
        tagged(t, 'seat-1', ['course:7']),
        tagged(t, 'seat-2', ['course:8']),
        tagged(t, 'seat-3', ['course:7']),
      ]);
      const [refused] = await store.events.appendMany([tagged(t, 'seat-4', ['course:7'], 'Booked', { condition: cond(['course:7'], 1) })]);
      expect(!refused.ok && refused.error.code).toBe('APPEND_CONDITION_FAILED');
      expect(!refused.ok && refused.error.details).toEqual({ position: 3, after: 1 });
      const [never] = await store.events.appendMany([tagged(t, 'seat-4', ['course:7'], 'Booked', { condition: cond(['course:7']) })]);
      expect(!never.ok && never.error.details).toEqual({ position: 1 });
      expect(await store.events.headPosition(t)).toBe(3);
      expect(await store.events.streamInfo(t, 'seat-4')).toBeNull();
      // After the last match, a type that never matched, a tag combination no event has: accepted.
      const out = await store.events.appendMany([
        tagged(t, 'seat-4', ['course:7'], 'Booked', { condition: cond(['course:7'], 3) }),
        tagged(t, 'seat-5', ['course:9'], 'Booked', { condition: cond(['course:7'], 0, ['Cancelled']) }),
        tagged(t, 'seat-6', ['course:9'], 'Booked', { condition: cond(['course:7', 'course:8']) }),
      ]);
      expect(out.map(codeOf)).toEqual(['ok', 'ok', 'ok']);
      expect(out.map((o) => o.ok && o.result.events[0].position)).toEqual([4, 5, 6]);
    });

    it('sees the events of earlier requests of the same group commit; a refused one counts for nothing; others unaffected', async () => {
      const t = await tenant(store, 't1');
      await store.events.appendMany([tagged(t, 'x-0', ['zzz'])]);
      const out = await store.events.appendMany([
        tagged(t, 'seat-1', ['course:7'], 'Booked', { condition: cond(['course:7'], 1) }),
        tagged(t, 'seat-2', ['course:7'], 'Booked', { condition: cond(['course:7'], 1) }),
        tagged(t, 'seat-3', ['course:8'], 'Booked', { expectedVersion: 5 }),
        tagged(t, 'seat-4', ['course:9'], 'Booked', { condition: cond(['course:8']) }),
        tagged(t, 'seat-5', ['course:7'], 'Booked', { condition: cond(['unrelated'], 0) }),
      ]);
      expect(out.map(codeOf)).toEqual(['ok', 'APPEND_CONDITION_FAILED', 'VERSION_CONFLICT', 'ok', 'ok']);
      expect(!out[1].ok && out[1].error.details).toEqual({ position: 2, after: 1 });
      expect(positions(await store.events.readAll(t, 0, 10))).toEqual([1, 2, 3, 4]);
    });

    it('checks expectedVersion before the condition, the condition before a stale state and a refusal', async () => {
      const t = await tenant(store, 't1');
      await store.events.appendMany([tagged(t, 'seat-1', ['course:7'])]);
      const refusal = { code: 'REDUCER_REJECTED' as const, message: 'no', details: {} };
      const snapshot = { bindingId: 'b', baseVersion: 9, state: '{}' };
      const out = await store.events.appendMany([
        tagged(t, 'seat-1', ['course:7'], 'B', { condition: cond(['course:7']), expectedVersion: 0, refusal, snapshot }),
        tagged(t, 'seat-1', ['course:7'], 'B', { condition: cond(['course:7']), expectedVersion: 1, refusal, snapshot }),
        tagged(t, 'seat-1', ['course:7'], 'B', { condition: cond(['course:7'], 1), expectedVersion: 1, refusal, snapshot }),
        tagged(t, 'seat-1', ['course:7'], 'B', { condition: cond(['course:7'], 1), expectedVersion: 1, refusal }),
      ]);
      expect(out.map(codeOf)).toEqual(['VERSION_CONFLICT', 'APPEND_CONDITION_FAILED', 'STATE_STALE', 'REDUCER_REJECTED']);
    });

    it('never counts an erased event: its tags are gone, it matches no query and reads back without tags', async () => {
      const t = await tenant(store, 't1');
      await store.events.appendMany([
        tagged(t, 'student-a', ['student:a', 'course:7'], 'Joined'),
        tagged(t, 'student-b', ['course:7'], 'Joined'),
      ]);
      await store.erasure.erase(t, 'student-a');
      const [e] = await store.events.readStream(t, 'student-a', 1, 1);
      expect(e.erasedAt).toEqual(expect.any(Number));
      expect('tags' in e).toBe(false);
      const read = (items: { tags?: string[]; types?: string[] }[]) =>
        store.events.readLog(t, { direction: 'forward', afterPosition: 0, limit: 10, query: { items } });
      expect(await read([{ tags: ['student:a'] }])).toEqual([]);
      expect(positions(await read([{ tags: ['course:7'] }]))).toEqual([2]);
      expect(positions(await read([{ types: ['Joined'] }]))).toEqual([2]);
      expect(positions(await read([{ types: ['Joined'] }, {}]))).toEqual([2, 3]); // 3: the $erased event
      const rows = await rawAll(store, 'SELECT tag FROM event_tags WHERE tenant_id = ? AND position = 1', [t]);
      expect(rows).toEqual([]);
      const [ok] = await store.events.appendMany([tagged(t, 'x-1', ['n'], 'N', { condition: cond(['student:a']) })]);
      expect(ok.ok).toBe(true);
    });
  });

  describe('dcb: transactions', () => {
    const member = (t: string, id: string, size: number, aggregateId: string, over: Partial<AppendRequest> = {}) =>
      req(t, aggregateId, {
        transaction: { id, size },
        events: [
          { eventType: 'A', data: '{"a":1}', tags: [`agg:${aggregateId}`] },
          { eventType: 'B', data: '{"b":2}' },
        ],
        ...over,
      });

    it('stores a transaction of three aggregates contiguously, or none of it (a wrong version on the third: nothing of the first two)', async () => {
      const t = await tenant(store, 't1');
      await store.events.appendMany([req(t, 'c-1')]);
      const bad = await store.events.appendMany([
        member(t, 'tx1', 3, 'a-1'),
        member(t, 'tx1', 3, 'b-1', { expectedVersion: 0 }),
        member(t, 'tx1', 3, 'c-1', { expectedVersion: 0 }),
        req(t, 'd-1'),
      ]);
      expect(bad.map((o) => (o.ok ? 'ok' : o.error.code))).toEqual(['VERSION_CONFLICT', 'VERSION_CONFLICT', 'VERSION_CONFLICT', 'ok']);
      expect(!bad[0].ok && bad[0].error.details).toEqual({ expectedVersion: 0, actualVersion: 1, aggregateId: 'c-1' });
      expect(await store.events.streamInfo(t, 'a-1')).toBeNull();
      expect(await store.events.streamInfo(t, 'b-1')).toBeNull();
      expect(positions(await store.events.readAll(t, 0, 10))).toEqual([1, 2]);
      expect(await rawAll(store, 'SELECT tag FROM event_tags WHERE tenant_id = ?', [t])).toEqual([]);

      const good = await store.events.appendMany([
        req(t, 'd-1'),
        member(t, 'tx2', 3, 'a-1'),
        member(t, 'tx2', 3, 'b-1', { expectedVersion: 0 }),
        member(t, 'tx2', 3, 'c-1', { expectedVersion: 1 }),
        req(t, 'd-1'),
      ]);
      expect(good.map((o) => o.ok && o.result.events.map((e) => [e.aggregateId, e.version, e.position]))).toEqual([
        [['d-1', 2, 3]],
        [
          ['a-1', 1, 4],
          ['a-1', 2, 5],
        ],
        [
          ['b-1', 1, 6],
          ['b-1', 2, 7],
        ],
        [
          ['c-1', 2, 8],
          ['c-1', 3, 9],
        ],
        [['d-1', 3, 10]],
      ]);
      expect(
        positions(
          await store.events.readLog(t, { direction: 'forward', afterPosition: 0, limit: 10, query: { items: [{ tags: ['agg:b-1'] }] } }),
        ),
      ).toEqual([6]);
    });

    it('checks a transaction’s condition once against the log, its own events not counting; refused: nothing stored', async () => {
      const t = await tenant(store, 't1');
      const condition = { failIfEventsMatch: { items: [{ tags: ['agg:a-1'] }, { tags: ['agg:b-1'] }] } };
      const first = await store.events.appendMany([member(t, 'tx', 2, 'a-1', { condition }), member(t, 'tx', 2, 'b-1')]);
      expect(first.every((o) => o.ok)).toBe(true);
      const again = await store.events.appendMany([member(t, 'tx2', 2, 'x-1', { condition }), member(t, 'tx2', 2, 'y-1')]);
      expect(again.map((o) => !o.ok && o.error.details)).toEqual([{ position: 1 }, { position: 1 }]);
      const later = await store.events.appendMany([
        member(t, 'tx3', 2, 'x-1', { condition: { ...condition, after: 4 } }),
        member(t, 'tx3', 2, 'y-1'),
      ]);
      expect(later.every((o) => o.ok)).toBe(true);
      expect(await store.events.headPosition(t)).toBe(8);
    });

    it('replays a keyed transaction: every member its own events of the first answer, nothing stored again', async () => {
      const t = await tenant(store, 't1');
      const idempotency = { key: 'k1', requestHash: 'h1', notBefore: 0, outcome: '{"states":[]}' };
      const tx = (id: string) => [member(t, id, 3, 'a-1', { idempotency }), member(t, id, 3, 'b-1'), member(t, id, 3, 'c-1')];
      const first = await store.events.appendMany(tx('one'));
      expect(first.every((o) => o.ok && !o.result.replay)).toBe(true);
      await store.events.appendMany([req(t, 'a-1')]); // the stream moves on: a replay answers what was stored all the same
      const again = await store.events.appendMany(tx('two'));
      expect(again.map((o) => o.ok && [o.result.aggregateId, positions(o.result.events), o.result.replay])).toEqual([
        ['a-1', [1, 2], { outcome: '{"states":[]}' }],
        ['b-1', [3, 4], { outcome: '{"states":[]}' }],
        ['c-1', [5, 6], { outcome: '{"states":[]}' }],
      ]);
      // (The first answer's events are the commit's rows: they carry the tenant too.)
      const plain = (events: StoredEvent[]) => events.map((e) => ({ ...e, tenantId: undefined }));
      expect(again.map((o) => o.ok && plain(o.result.events))).toEqual(first.map((o) => o.ok && plain(o.result.events)));
      expect(await store.events.headPosition(t)).toBe(7);
      const reused = await store.events.appendMany([
        member(t, 'x', 2, 'a-1', { idempotency: { ...idempotency, requestHash: 'h2' } }),
        member(t, 'x', 2, 'q-1'),
      ]);
      expect(reused.map((o) => !o.ok && o.error.code)).toEqual(['IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_KEY_REUSED']);
    });
  });

  describe('dcb: conditions raced from several instances', () => {
    if (harness.concurrentInstances) {
      /** Appends of other instances blocked on a tenant's head lock (PostgreSQL: the only store with concurrent instances). */
      const waitingOnLocks = async () =>
        (await rawAll<{ n: number }>(store, "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'", []))[0].n;

      /**
       * Another instance holds the commit of an event tagged `heldTag` open at position 2 (its head lock taken); this
       * instance appends under a condition on `course:7` after 1, planned on a head of 1, and is seen waiting for the
       * lock before the other commits. Both outcomes, and the tenant.
       */
      const raceHeldCommit = async (heldTag: string) => {
        const t = await tenant(store, 't1');
        await store.events.appendMany([tagged(t, 'x-0', ['zzz'])]);
        const { slow, fast, inside, release } = await heldCommit(harness, store, extra);
        const held = slow.events.appendMany([tagged(t, 'seat-1', [heldTag])]);
        await inside;
        const racing = fast.events.appendMany([tagged(t, 'seat-2', ['course:7'], 'Booked', { condition: cond(['course:7'], 1) })]);
        await until(waitingOnLocks, (n) => n >= 1, 10_000, 'the conditional append waiting for the head lock');
        release();
        const [h] = await held;
        expect(h.ok && h.result.events[0].position).toBe(2);
        return { t, racing: (await racing)[0] };
      };

      it('decides a condition on an event another instance committed while this append waited for the lock', async () => {
        const { t, racing } = await raceHeldCommit('course:7');
        expect(codeOf(racing)).toBe('APPEND_CONDITION_FAILED');
        expect(!racing.ok && racing.error.details).toEqual({ position: 2, after: 1 });
        expect(positions(await store.events.readAll(t, 0, 10))).toEqual([1, 2]);
      });

      it('accepts a condition the event committed meanwhile does not meet, after it, without a false conflict', async () => {
        const { t, racing } = await raceHeldCommit('course:8');
        expect(racing.ok && racing.result.events[0].position).toBe(3);
        const course7 = { items: [{ tags: ['course:7'] }] };
        expect(positions(await store.events.readLog(t, { direction: 'forward', afterPosition: 0, limit: 10, query: course7 }))).toEqual([
          3,
        ]);
      });
    }

    it('books exactly 30 seats of a 30-seat course when 50 writers on three instances race with conditions, retrying on conflict', async () => {
      const t = await tenant(store, 't1');
      const instances = [store, await harness.sameStorage(store), await harness.sameStorage(store)];
      extra.push(...instances.slice(1));
      const course = { items: [{ tags: ['course:7'] }] };
      let conflicts = 0;
      const writer = async (n: number): Promise<'booked' | 'full'> => {
        const s = instances[n % instances.length];
        for (;;) {
          const seats = await s.events.readLog(t, { direction: 'forward', afterPosition: 0, limit: 100, query: course });
          if (seats.length >= 30) return 'full';
          const after = seats.length > 0 ? seats[seats.length - 1].position : 0;
          const [o] = await s.events.appendMany([
            tagged(t, `booking-${n}`, ['course:7', `student:${n}`], 'SeatBooked', { condition: { failIfEventsMatch: course, after } }),
          ]);
          if (o.ok) return 'booked';
          expect(o.error.code).toBe('APPEND_CONDITION_FAILED');
          expect(o.error.details.position as number).toBeGreaterThan(after);
          conflicts++;
        }
      };
      const outcomes = await Promise.all(Array.from({ length: 50 }, (_, n) => writer(n)));
      expect(outcomes.filter((o) => o === 'booked')).toHaveLength(30);
      const stored = await store.events.readLog(t, { direction: 'forward', afterPosition: 0, limit: 100, query: course });
      expect(stored).toHaveLength(30);
      expect(positions(stored)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1)); // gap-free, nothing else stored
      expect(await store.events.headPosition(t)).toBe(30);
      // The race was real: writers read a state another one's commit made stale (on one instance or across them).
      expect(conflicts).toBeGreaterThan(0);
    }, 120_000);
  });
}
