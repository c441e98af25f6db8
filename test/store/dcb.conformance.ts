import { AppendRequest, StoredEvent } from '../../src/store/event-log.port';
import { Store } from '../../src/store/store.port';
import type { StoreHarness } from './store-fixtures';
import { rawAll, req, tenant } from './store-fixtures';

/** An append of one event with these tags (and type). */
const tagged = (t: string, aggregateId: string, tags: string[], eventType = 'Happened', over: Partial<AppendRequest> = {}): AppendRequest =>
  req(t, aggregateId, { events: [{ eventType, data: '{"n":1}', tags }], ...over });

const positions = (events: StoredEvent[]) => events.map((e) => e.position);

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
}
