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
}
