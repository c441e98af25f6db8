import { Store } from '../../src/store/store.port';
import { req, tenant } from './store-fixtures';

/**
 * Issue 24, item 7, against the real engine: aggregate ids are kept byte for byte (no folding by a
 * collation), and an append's trace context is stored with its events. Part of testEventStore, run
 * inside its describe on the store its beforeEach opened.
 */
export function describeIdsAndTraceStore(current: () => Store): void {
  let store: Store;
  beforeEach(() => {
    store = current();
  });

  it('keeps Unicode aggregate ids byte for byte: no folding of case or normalisation, pages by id complete', async () => {
    const t = await tenant(store, 't1');
    // NFC and NFD é, case, a 4-byte character, '/', a space, and a key a collation might fold or reorder.
    const ids = ['caf\u00e9', 'cafe\u0301', 'CAFÉ', 'acct/42', 'acct 42', '\u{1F680}', 'a\u200db', '日本', 'Zeta', 'zeta'];
    const out = await store.events.appendMany(ids.map((id) => req(t, id, { aggregateType: 'acct' })));
    expect(out.every((o) => o.ok)).toBe(true);
    for (const id of ids) {
      const events = await store.events.readStream(t, id, 1, 10);
      expect({ id, ids: events.map((e) => e.aggregateId), v: events.map((e) => e.version) }).toEqual({ id, ids: [id], v: [1] });
      expect(await store.events.streamInfo(t, id)).toEqual({ aggregateType: 'acct', version: 1 });
    }
    expect((await store.events.readAll(t, 0, 100)).map((e) => e.aggregateId)).toEqual(ids);
    // Paged by id two at a time, each id exactly once, whatever the collation's order.
    const seen: string[] = [];
    for (let after = ''; ;) {
      const page = await store.snapshots.listAggregates(t, 'acct', after, 2);
      if (page.length === 0) break;
      seen.push(...page.map((a) => a.aggregateId));
      after = page[page.length - 1].aggregateId;
    }
    expect([...seen].sort()).toEqual([...ids].sort());
  });

  it("stores an append's trace context with each of its events, and nothing when none was sent", async () => {
    const t = await tenant(store, 't1');
    const tp = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const out = await store.events.appendMany([
      req(t, 'order-1', {
        traceParent: tp,
        traceState: 'rojo=1',
        events: [
          { eventType: 'A', data: '{}' },
          { eventType: 'B', data: '{}' },
        ],
      }),
      req(t, 'order-2', { traceParent: tp }),
      req(t, 'order-3'),
    ]);
    expect(out.every((o) => o.ok)).toBe(true);
    const all = await store.events.readAll(t, 0, 10);
    expect(all.map((e) => [e.aggregateId, e.traceParent, e.traceState])).toEqual([
      ['order-1', tp, 'rojo=1'],
      ['order-1', tp, 'rojo=1'],
      ['order-2', tp, undefined],
      ['order-3', undefined, undefined],
    ]);
    expect('traceParent' in all[3] || 'traceState' in all[3]).toBe(false);
    expect((await store.events.readStream(t, 'order-1', 1, 10)).map((e) => e.traceState)).toEqual(['rojo=1', 'rojo=1']);
  });
}
