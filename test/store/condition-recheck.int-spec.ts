import fc from 'fast-check';
import { matchesQuery } from '../../src/store/append-plan';
import { EventQuery } from '../../src/store/event-log.port';
import { conditionRaceItems } from '../../src/store/postgres/postgres-event-log-statements';
import { PostgresStore } from '../../src/store/postgres/postgres-store';
import { ThrowawayPostgres } from '../support/throwaway-postgres';
import { req, tenant } from './store-fixtures';

/**
 * es_condition_raced (condition-recheck-schema.ts) decides append conditions inside PostgreSQL's
 * one-statement commit; the locked path and SQLite decide them with conditionHitSql, and the plan
 * checks a batch's own events with matchesQuery. This holds the function to matchesQuery over a
 * stored log: for any query, `after` and head, it answers whether an event of the tenant after
 * `after`, at or before the head, not erased, matches — nothing of another tenant, nothing past the head.
 */
const TYPES = ['Booked', 'Cancelled', 'Moved'];
const TAGS = ['course:1', 'course:2', 'student:1', 'student:2'];

interface Appended {
  position: number;
  aggregateId: string;
  eventType: string;
  tags: string[];
}

let pg: ThrowawayPostgres;
let store: PostgresStore;
const log: Appended[] = [];
let head = 0;
const ERASED = 'seat-3';

beforeAll(async () => {
  pg = await ThrowawayPostgres.start();
  store = new PostgresStore({ connectionString: await pg.createDatabase() });
  await store.migrate();
  const t1 = await tenant(store, 't1');
  const t2 = await tenant(store, 't2');
  // 60 events over 6 aggregates: every type, every combination of up to two tags, some untagged.
  for (let i = 0; i < 60; i++) {
    const eventType = TYPES[i % 3];
    const tags = [TAGS[i % 4], TAGS[(i * 7) % 4]].filter((t, k, all) => (i % 5 === 0 ? false : all.indexOf(t) === k));
    const aggregateId = `seat-${i % 6}`;
    const [o] = await store.events.appendMany([
      req(t1, aggregateId, { events: [{ eventType, data: '{}', ...(tags.length ? { tags } : {}) }] }),
    ]);
    if (!o.ok) throw new Error(o.error.message);
    log.push({ position: o.result.events[0].position, aggregateId, eventType, tags });
    // The other tenant has the same tags and types at every position: it must never count.
    await store.events.appendMany([req(t2, aggregateId, { events: [{ eventType, data: '{}', tags: TAGS }] })]);
  }
  await store.erasure.erase(t1, ERASED);
  head = await store.events.headPosition(t1);
  // The erasure's own system event is an event of the log like any other.
  for (const e of await store.events.readAll(t1, log.length, 10)) {
    log.push({ position: e.position, aggregateId: e.aggregateId, eventType: e.eventType, tags: e.tags ? [...e.tags] : [] });
  }
  expect(log.map((e) => e.position)).toEqual(Array.from({ length: head }, (_, i) => i + 1));
}, 120_000);
afterAll(async () => {
  await store?.close();
  await pg?.stop();
});

async function raced(query: EventQuery, after: number, upTo: number, tenantId = 't1'): Promise<boolean> {
  const items = conditionRaceItems([{ index: 0, tenantId, query, after }]);
  const { rows } = await store.pool.query<{ r: boolean }>('SELECT es_condition_raced($1::json, $2::json) AS r', [
    items,
    JSON.stringify({ [tenantId]: upTo, t2: 1_000_000 }),
  ]);
  return rows[0].r;
}

const expected = (query: EventQuery, after: number, upTo: number): boolean =>
  log.some((e) => e.position > after && e.position <= upTo && e.aggregateId !== ERASED && matchesQuery(query, e));

describe('es_condition_raced', () => {
  it('agrees with matchesQuery on the stored log for any query, after and head', async () => {
    const item = fc.record(
      {
        tags: fc.uniqueArray(fc.constantFrom(...TAGS, 'never'), { maxLength: 3 }),
        types: fc.uniqueArray(fc.constantFrom(...TYPES, 'Never'), { maxLength: 2 }),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(item, { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 0, max: 65 }),
        fc.integer({ min: 0, max: 65 }),
        async (items, after, upTo) => {
          const query = { items };
          expect(await raced(query, after, upTo)).toBe(expected(query, after, upTo));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('takes tags as given: array syntax, quotes, backslashes and non-ASCII are plain characters of the tag', async () => {
    const odd = 'a,b{"c"}\\d NULL é 😀';
    // A tenant of its own: the property's log stays as it is.
    const t3 = await tenant(store, 't3');
    const [o] = await store.events.appendMany([req(t3, 'odd-1', { events: [{ eventType: 'Odd', data: '{}', tags: [odd, 'plain'] }] })]);
    if (!o.ok) throw new Error(o.error.message);
    const at = o.result.events[0].position;
    expect(await raced({ items: [{ tags: [odd] }] }, at - 1, at, t3)).toBe(true);
    expect(await raced({ items: [{ tags: ['plain', odd] }] }, at - 1, at, t3)).toBe(true);
    for (const near of ['a', 'a,b{"c"}', '{a,b}', 'NULL', odd.normalize('NFD') === odd ? 'x' : odd.normalize('NFD')]) {
      expect(await raced({ items: [{ tags: [near] }] }, at - 1, at, t3)).toBe(false);
    }
  });

  it('finds the cases the property must cover: a match, a match only past the head, an erased match, and none', async () => {
    const erasedOnly = log.find((e) => e.aggregateId === ERASED && e.tags.length > 0)!;
    const byTag = { items: [{ tags: [erasedOnly.tags[0]] }] };
    // Just the erased event's position in range: its tags are gone, its type is skipped.
    expect(await raced(byTag, erasedOnly.position - 1, erasedOnly.position)).toBe(false);
    expect(await raced({ items: [{ types: [erasedOnly.eventType] }] }, erasedOnly.position - 1, erasedOnly.position)).toBe(false);
    expect(await raced({ items: [{}] }, erasedOnly.position - 1, erasedOnly.position)).toBe(false);
    const live = log.find((e) => e.aggregateId !== ERASED && e.tags.length === 2)!;
    const both = { items: [{ tags: live.tags, types: [live.eventType] }] };
    expect(await raced(both, live.position - 1, live.position)).toBe(true);
    // Past the head it does not count (the commit's own events are there), nor at or before `after`.
    expect(await raced(both, live.position - 1, live.position - 1)).toBe(false);
    expect(await raced(both, live.position, head)).toBe(expected(both, live.position, head));
    expect(await raced({ items: [{ tags: ['never'] }] }, 0, head)).toBe(false);
    expect(await raced({ items: [{}] }, 0, head)).toBe(true);
  });
});
