import { AppendRequest } from '../../src/store/event-log.port';
import { EventWebhookClaim, NewEventWebhook } from '../../src/store/event-webhook-records';
import { EventWebhookRepository } from '../../src/store/event-webhook-repository';
import { InMemoryEventWebhookRepository } from '../../src/store/memory/in-memory-event-webhook-repository';
import { InMemoryTenantLog } from '../../src/store/memory/in-memory-tenant-log';
import { Store } from '../../src/store/store.port';
import type { StoreHarness } from './store-fixtures';
import { req, tenant } from './store-fixtures';

const hook = (tenantId: string, webhookId: string, over: Partial<NewEventWebhook> = {}): NewEventWebhook => ({
  tenantId,
  webhookId,
  name: null,
  url: 'https://receiver.example/hook',
  aggregateTypes: null,
  eventTypes: null,
  query: null,
  afterPosition: 0,
  createdAt: Date.now(),
  ...over,
});

/** What the event webhooks' suite needs of an adapter: its repository, a second instance over the same data, tenants and appends. */
export interface EventWebhookFixture {
  repo: EventWebhookRepository;
  /** Another instance on the same storage (PostgreSQL: another pool; SQLite: another connection; in memory: the same). */
  other(): Promise<EventWebhookRepository>;
  tenant(id: string): Promise<string>;
  append(requests: AppendRequest[]): Promise<void>;
}

/** The SQL stores: the real event log, other instances opened on the same storage. */
export function storeEventWebhookFixture(store: Store, harness: StoreHarness, extra: Store[]): EventWebhookFixture {
  return {
    repo: store.eventWebhooks,
    async other() {
      const other = await harness.sameStorage(store);
      extra.push(other);
      return other.eventWebhooks;
    },
    tenant: (id) => tenant(store, id),
    async append(requests) {
      await store.events.appendMany(requests);
    },
  };
}

/** The in-memory adapter over its in-memory log. */
export function inMemoryEventWebhookFixture(): EventWebhookFixture {
  const log = new InMemoryTenantLog();
  const repo = new InMemoryEventWebhookRepository(log);
  return { repo, other: async () => repo, tenant: async (id) => id, append: async (requests) => log.append(requests) };
}

/**
 * The event webhooks' repository (src/store/sql-event-webhook-repository.ts on each store, and the
 * in-memory adapter): the per-tenant cap, claims raced from two store instances (PostgreSQL: two
 * pools; SQLite: two connections and writer threads on one file), the fence on every delivering
 * write, the filtered read with its extent, dead letters and suspension, replay and resume.
 */
export function describeEventWebhookStore(current: () => EventWebhookFixture): void {
  let f: EventWebhookFixture;
  let repo: EventWebhookRepository;
  beforeEach(() => {
    f = current();
    repo = f.repo;
  });

  describe('event webhooks', () => {
    it('keeps the per-tenant cap when two instances create at once', async () => {
      const t = await f.tenant('ewh-cap');
      const other = await f.other();
      const made = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? other : repo).create(hook(t, `w${i}`), 3)));
      expect(made.filter(Boolean)).toHaveLength(3);
      expect(await repo.count(t)).toBe(3);
      // Another tenant has its own cap; 0 is no limit.
      const u = await f.tenant('ewh-cap-2');
      expect(await repo.create(hook(u, 'x'), 1)).toBe(true);
      expect(await repo.create(hook(u, 'y'), 1)).toBe(false);
      expect(await repo.create(hook(u, 'z'), 0)).toBe(true);
    });

    it('lets exactly one of two instances claim a subscription; a lapsed claim is taken over and the old owner is fenced off', async () => {
      const t = await f.tenant('ewh-claim');
      await f.append([req(t, 'order-1')]);
      expect(await repo.create(hook(t, 'w'), 0)).toBe(true);
      const other = await f.other();
      const now = Date.now();
      for (let round = 0; round < 10; round++) {
        const claims = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            (i % 2 ? other : repo).claim(t, 'w', `owner-${round}-${i}`, now + round * 100_000, now + round * 100_000 + 50_000),
          ),
        );
        const winners = claims.filter((c) => c !== null);
        expect(winners).toHaveLength(1);
        expect((await repo.get(t, 'w'))!.claimOwner).toBe(winners[0]!.claimOwner);
      }
      // The claim of round 9 holds until now + 950,000: a claim asked at now + 900,000 by someone else fails, past it succeeds.
      const holder = (await repo.get(t, 'w'))!.claimOwner!;
      expect(await other.claim(t, 'w', 'late', now + 940_000, now + 1_000_000)).toBeNull();
      expect(await repo.due(now + 940_000, 'late', 10)).toEqual([]);
      expect(await repo.due(now + 940_000, holder, 10)).toEqual([{ tenantId: t, webhookId: 'w' }]);
      const taken = await other.claim(t, 'w', 'taker', now + 960_000, now + 1_010_000);
      expect(taken?.claimOwner).toBe('taker');
      const old: EventWebhookClaim = { tenantId: t, webhookId: 'w', owner: holder, deliveredPosition: 0 };
      expect(await repo.advance(old, 1, now)).toBe(false);
      expect(await repo.renew(old, now)).toBe(false);
      expect(await repo.attemptFailed(old, 1, 'x', now, now)).toBe(false);
      expect(await repo.deadLettered(old, { position: 1, eventId: 'e' }, 1, 'x', now, 3)).toBe(false);
      const mine: EventWebhookClaim = { ...old, owner: 'taker' };
      expect(await other.advance(mine, 1, now + 1_010_000)).toBe(true);
      // A stale cursor is fenced too (a replay or a second run moved it).
      expect(await other.advance(mine, 1, now + 1_010_000)).toBe(false);
      expect((await repo.get(t, 'w'))!.deliveredPosition).toBe(1);
      // Nothing after the cursor: not due, whoever asks.
      expect(await repo.due(now + 2_000_000, 'anyone', 10)).toEqual([]);
    });

    it("reads the tenant's matching events after the cursor within a window, with the extent scanned", async () => {
      const t = await f.tenant('ewh-read');
      const u = await f.tenant('ewh-read-other');
      await f.append([
        req(t, 'order-1', { events: [{ eventType: 'Placed', data: '{"a":1}' }] }),
        req(t, 'cart-1', { events: [{ eventType: 'Placed', data: '{}' }] }),
        req(u, 'order-9', { events: [{ eventType: 'Placed', data: '{}' }] }),
        req(t, 'order-1', { events: [{ eventType: 'Paid', data: '{}' }] }),
        req(t, 'order-2', { events: [{ eventType: 'Shipped', data: '{}' }] }),
      ]);
      expect(await repo.create(hook(t, 'w', { aggregateTypes: ['order'], eventTypes: ['Placed', 'Paid'] }), 0)).toBe(true);
      const w = (await repo.get(t, 'w'))!;
      const page = await repo.eventsAfter(w, 0, 10, 1000);
      expect(page.events.map((e) => [e.position, e.aggregateId, e.eventType])).toEqual([
        [1, 'order-1', 'Placed'],
        [3, 'order-1', 'Paid'],
      ]);
      expect(page.events[0].data).toBe('{"a":1}');
      expect(page.extent).toBe(4);
      expect(await repo.eventsAfter(w, 0, 1, 1000)).toMatchObject({ events: [{ position: 1 }], extent: 4 });
      // A window shorter than the gap: nothing matches in it, the extent says how far it looked.
      expect(await repo.eventsAfter(w, 3, 10, 1)).toEqual({ events: [], extent: 4 });
      expect(await repo.eventsAfter(w, 4, 10, 1000)).toEqual({ events: [], extent: 4 });
      expect(await repo.pendingCount(w, 10, 1000)).toBe(2);
      expect(await repo.pendingCount(w, 1, 1000)).toBe(1);
      expect(await repo.pendingCount(w, 10, 2)).toBe(1); // positions 1 and 2 looked at
      expect(await repo.headPosition(t)).toBe(4);
    });

    it('keeps a DCB query with the subscription and reads only events matching it AND the type lists, tags included', async () => {
      const t = await f.tenant('ewh-query');
      const u = await f.tenant('ewh-query-other');
      await f.append([
        req(t, 'course-7', { events: [{ eventType: 'Subscribed', data: '{"s":1}', tags: ['course:7', 'student:ann'] }] }),
        req(t, 'course-8', { events: [{ eventType: 'Subscribed', data: '{}', tags: ['course:8', 'student:ann'] }] }),
        req(u, 'course-7', { events: [{ eventType: 'Subscribed', data: '{}', tags: ['course:7'] }] }),
        req(t, 'course-7', { events: [{ eventType: 'Renamed', data: '{}', tags: ['course:7'] }] }),
        req(t, 'course-7', { events: [{ eventType: 'Subscribed', data: '{}' }] }),
        req(t, 'student-1', { events: [{ eventType: 'Registered', data: '{}', tags: ['student:bob'] }] }),
        req(t, 'course-9', { events: [{ eventType: 'Subscribed', data: '{}', tags: ['course:7', 'student:cat'] }] }),
      ]);
      // (Subscribed with course:7) OR (anything with student:bob), AND aggregate type course: positions 1 and 6.
      const query = { items: [{ types: ['Subscribed'], tags: ['course:7'] }, { tags: ['student:bob'] }] };
      expect(await repo.create(hook(t, 'w', { aggregateTypes: ['course'], query }), 0)).toBe(true);
      expect(await repo.create(hook(t, 'plain'), 0)).toBe(true);
      const w = (await repo.get(t, 'w'))!;
      expect(w.query).toEqual(query);
      expect((await repo.get(t, 'plain'))!.query).toBeNull();
      expect(Object.fromEntries((await repo.list(t)).map((x) => [x.webhookId, x.query]))).toEqual({ w: query, plain: null });
      const page = await repo.eventsAfter(w, 0, 10, 1000);
      expect(page.events.map((e) => [e.position, e.aggregateId, e.eventType, e.tags])).toEqual([
        [1, 'course-7', 'Subscribed', ['course:7', 'student:ann']],
        [6, 'course-9', 'Subscribed', ['course:7', 'student:cat']],
      ]);
      expect(page.extent).toBe(6);
      // Nothing matches in positions 2..5: the extent lets the cursor pass them.
      expect(await repo.eventsAfter(w, 1, 10, 4)).toEqual({ events: [], extent: 5 });
      expect(await repo.pendingCount(w, 10, 1000)).toBe(2);
      expect(await repo.pendingCount(w, 10, 5)).toBe(1);
      // Without the type list the student:bob item matches position 5 too; the plain subscription sees all six.
      expect(await repo.create(hook(t, 'any-type', { query }), 0)).toBe(true);
      const anyType = (await repo.eventsAfter((await repo.get(t, 'any-type'))!, 0, 10, 1000)).events;
      expect(anyType.map((e) => e.position)).toEqual([1, 5, 6]);
      const plain = (await repo.eventsAfter((await repo.get(t, 'plain'))!, 0, 10, 1000)).events;
      expect(plain.map((e) => e.position)).toEqual([1, 2, 3, 4, 5, 6]);
      // An event without tags reads without them (not an empty list).
      expect(plain[3].tags).toBeUndefined();
    });

    it('dead-letters and moves on, suspends after dead letters in a row, replays and resumes', async () => {
      const t = await f.tenant('ewh-dead');
      await f.append([1, 2, 3, 4].map((i) => req(t, `order-${i}`)));
      expect(await repo.create(hook(t, 'w'), 0)).toBe(true);
      const now = Date.now();
      const claimAt = async (pos: number) => {
        expect(await repo.claim(t, 'w', 'me', now, now + 60_000)).not.toBeNull();
        return { tenantId: t, webhookId: 'w', owner: 'me', deliveredPosition: pos };
      };
      let c = await claimAt(0);
      expect(await repo.attemptFailed(c, 1, 'HTTP 500', now + 1_000, now)).toBe(true);
      let w = (await repo.get(t, 'w'))!;
      expect(w).toMatchObject({ attempts: 1, nextAttemptAt: now + 1_000, lastError: 'HTTP 500', claimOwner: null, deliveredPosition: 0 });
      expect(await repo.due(now, 'me', 10)).toEqual([]); // not due yet
      c = await claimAt(0);
      expect(await repo.deadLettered(c, { position: 1, eventId: 'e1' }, 2, 'HTTP 500', now, 2)).toBe(true);
      w = (await repo.get(t, 'w'))!;
      expect(w).toMatchObject({ status: 'active', deliveredPosition: 1, attempts: 0, consecutiveDead: 1 });
      c = await claimAt(1);
      expect(await repo.deadLettered(c, { position: 2, eventId: 'e2' }, 2, 'HTTP 503', now, 2)).toBe(true);
      w = (await repo.get(t, 'w'))!;
      expect(w).toMatchObject({ status: 'suspended', deliveredPosition: 2, consecutiveDead: 2, suspendedAt: now });
      expect(w.suspendedReason).toContain('HTTP 503');
      expect(await repo.claim(t, 'w', 'me', now, now + 60_000)).toBeNull();
      expect(await repo.due(now + 10_000, 'me', 10)).toEqual([]);
      expect(await repo.deadCount(t, 'w')).toBe(2);
      expect((await repo.deadLetters(t, 'w', 1, 10)).map((d) => [d.position, d.eventId, d.lastError])).toEqual([[2, 'e2', 'HTTP 503']]);
      expect(await repo.replay(t, 'w', 1, now)).toBe(false); // suspended: resume first
      expect(await repo.resume(t, 'w', now)).toBe(true);
      expect(await repo.resume(t, 'w', now)).toBe(false);
      expect((await repo.get(t, 'w'))!).toMatchObject({ status: 'active', consecutiveDead: 0, deliveredPosition: 2 });
      expect(await repo.replay(t, 'w', 2, now)).toBe(true);
      expect((await repo.get(t, 'w'))!.deliveredPosition).toBe(1);
      expect((await repo.deadLetters(t, 'w', 0, 10)).map((d) => d.position)).toEqual([1]);
      // A success after a dead letter starts the count again.
      c = await claimAt(1);
      expect(await repo.advance(c, 2, now + 60_000)).toBe(true);
      expect((await repo.get(t, 'w'))!.consecutiveDead).toBe(0);
      expect(await repo.delete(t, 'w')).toBe(true);
      expect(await repo.delete(t, 'w')).toBe(false);
      expect(await repo.deadCount(t, 'w')).toBe(0);
    });
  });
}
