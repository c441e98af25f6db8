import { InMemoryNotificationLog } from '../../src/store/memory/in-memory-notification-log';
import { InMemoryWebhookRepository } from '../../src/store/memory/in-memory-webhook-repository';
import { NotificationHead } from '../../src/store/notification-repository.port';
import { Store } from '../../src/store/store.port';
import { WebhookDelivery } from '../../src/store/webhook-records';
import { WebhookRepository } from '../../src/store/webhook-repository';

/**
 * What the webhook roles' suite needs of an adapter: the roles themselves, and a way to write what
 * they read (a projection's webhook, its notifications) — lanes and deploys on the SQL stores, the
 * InMemoryNotificationLog in memory.
 */
export interface WebhookFixture {
  webhooks: WebhookRepository;
  /** The projection deployed, with a webhook at `url` or none. */
  configure(tenantId: string, projectionId: string, url: string | null): Promise<void>;
  /** State changes of these keys logged, in this order: the projection's next sequences. */
  log(tenantId: string, projectionId: string, keys: string[]): Promise<void>;
  head(tenantId: string, projectionId: string): Promise<NotificationHead | null>;
}

/** The SQL stores: deploys and lane runs write the tables the webhook roles read. */
export function storeWebhookFixture(store: Store): WebhookFixture {
  const positions = new Map<string, number>();
  const checkpoints = new Map<string, number>();
  return {
    webhooks: store.webhooks,
    async configure(tenantId, projectionId, url) {
      const version = { tenantId, versionId: `${projectionId}-v1`, projectionId, className: 'C', targetPosition: 0, createdAt: 1 };
      const notify = url ? { notifyConfig: JSON.stringify({ webhookUrl: url, isolated: false, sse: false }), webhookUrl: url } : {};
      await store.projections.deploy({ tenantId, projectionId, name: projectionId, version, ...notify });
    },
    async log(tenantId, projectionId, keys) {
      const versionId = `${projectionId}-v1`;
      let position = positions.get(tenantId) ?? 0;
      const items = keys.map((key) => ({ key, position: ++position }));
      positions.set(tenantId, position);
      await store.lanes.inbox.route({ tenantId, versionId }, items, position);
      // One lane run per change, in the order given: each commit logs the projection's next sequence.
      for (const { key, position: p } of items) {
        const lane = `${tenantId}\u0000${versionId}\u0000${key}`;
        if (!checkpoints.has(lane)) await store.lanes.runs.laneWork({ tenantId, versionId, key }, 1000);
        const change = { position: p, aggregateId: `a-${p}`, aggregateType: 'order', version: 1, timestamp: p, state: '{}' };
        const fromPosition = checkpoints.get(lane) ?? 0;
        const stored = await store.lanes.runs.applied(
          { tenantId, versionId, key },
          {
            state: '{}',
            fromPosition,
            appliedPosition: p,
            updatedAt: 1,
            notify: { projectionId, changes: [change] },
          },
        );
        if (!stored) throw new Error(`lane ${key} did not store position ${p}`);
        checkpoints.set(lane, p);
      }
    },
    head: (tenantId, projectionId) => store.notifications.head(tenantId, projectionId),
  };
}

/** The in-memory adapter over its in-memory log. */
export function inMemoryWebhookFixture(): WebhookFixture {
  const log = new InMemoryNotificationLog();
  return {
    webhooks: new InMemoryWebhookRepository(log),
    async configure(tenantId, projectionId, url) {
      log.configure(tenantId, projectionId, url ? { notifyConfig: JSON.stringify({ webhookUrl: url }), webhookUrl: url } : null);
    },
    async log(tenantId, projectionId, keys) {
      for (const key of keys) log.log(tenantId, projectionId, key);
    },
    head: async (tenantId, projectionId) => log.head(tenantId, projectionId),
  };
}

const URL = 'https://receiver.example/hook';
const seqs = (ds: WebhookDelivery[]) => ds.map((d) => d.sequence);

/** The webhook roles (WebhookDeliveryQueue, WebhookEndpointState, …) as the dispatcher and the API rely on them. */
export function describeWebhookStore(current: () => WebhookFixture): void {
  describe('webhook roles', () => {
    let f: WebhookFixture;
    let w: WebhookRepository;
    beforeEach(() => {
      f = current();
      w = f.webhooks;
    });

    it('turns notifications after the cursor into deliveries once, in batches; only projections with a webhook are backlogged', async () => {
      await f.configure('wa', 'p', URL);
      await f.configure('wa', 'none', null);
      await f.log('wa', 'p', ['k1', 'k2', 'k3', 'k4', 'k5']);
      await f.log('wa', 'none', ['k1']);
      expect(await w.backlogged(100)).toContainEqual({ tenantId: 'wa', projectionId: 'p' });
      expect(await w.backlogged(100)).not.toContainEqual({ tenantId: 'wa', projectionId: 'none' });
      expect(await w.enqueue('wa', 'p', 3, 1000)).toBe(3);
      expect(await w.enqueue('wa', 'p', 3, 1000)).toBe(2);
      expect(await w.enqueue('wa', 'p', 3, 1000)).toBe(0);
      expect(await w.backlogged(100)).not.toContainEqual({ tenantId: 'wa', projectionId: 'p' });
      expect(await f.head('wa', 'p')).toMatchObject({ lastSequence: 5, webhookSequence: 5 });
      const all = await w.list('wa', 'p', { afterSequence: 0, limit: 10 });
      expect(all.map((d) => [d.sequence, d.stateKey, d.status, d.attempts, d.nextAttemptAt, d.createdAt])).toEqual(
        [1, 2, 3, 4, 5].map((s) => [s, `k${s}`, 'pending', 0, 1000, 1000]),
      );
      expect(await w.enqueue('wa', 'never-logged', 3, 1000)).toBe(0);
    });

    it('starts a newly configured webhook from the current notifications', async () => {
      await f.configure('wb', 'p', URL);
      await f.log('wb', 'p', ['a', 'b']);
      await w.startDeliveriesNow('wb', 'p');
      expect(await w.enqueue('wb', 'p', 10, 1000)).toBe(0);
      await f.log('wb', 'p', ['c']);
      expect(await w.enqueue('wb', 'p', 10, 1000)).toBe(1);
      expect(seqs(await w.list('wb', 'p', { afterSequence: 0, limit: 10 }))).toEqual([3]);
    });

    it('keeps order per key: only its oldest undelivered delivery is due; delivered or dead, the next becomes the head', async () => {
      await f.configure('wc', 'p', URL);
      await f.log('wc', 'p', ['x', 'y', 'x', 'x', 'y']);
      expect(await w.enqueue('wc', 'p', 3, 1000)).toBe(3); // the next batch's rows wait behind this one's heads
      expect(await w.enqueue('wc', 'p', 3, 1000)).toBe(2);
      expect(seqs(await w.dueOfTenants(['wc'], 1000, 10))).toEqual([1, 2]);
      expect(await w.pendingCount('wc', 'p', 10)).toBe(5); // the waiting ones are pending to the API
      const [d1, d2] = await w.dueOfTenants(['wc'], 1000, 10);
      await w.delivered(d1, 1100);
      expect(seqs(await w.dueOfTenants(['wc'], 1000, 10))).toEqual([2, 3]);
      await w.attemptFailed({ ...d2, attempts: 1 }, 'HTTP 500', 2000, 1100); // a retry keeps its head
      expect(seqs(await w.dueOfTenants(['wc'], 1000, 10))).toEqual([3]);
      expect(seqs(await w.dueOfTenants(['wc'], 2000, 10))).toEqual([3, 2]); // earliest due first
      const retried = (await w.dueOfTenants(['wc'], 2000, 10)).find((d) => d.sequence === 2)!;
      expect(retried).toMatchObject({ attempts: 0, lastError: 'HTTP 500', nextAttemptAt: 2000, status: 'pending' });
      await w.attemptFailed(retried, 'HTTP 500', null, 2100); // dead: the key's next is its head
      expect(seqs(await w.dueOfTenants(['wc'], 2000, 10))).toEqual([3, 5]);
      expect(seqs(await w.list('wc', 'p', { status: 'dead', afterSequence: 0, limit: 10 }))).toEqual([2]);
      expect(seqs(await w.list('wc', 'p', { status: 'delivered', afterSequence: 0, limit: 10 }))).toEqual([1]);
      expect(seqs(await w.list('wc', 'p', { status: 'pending', afterSequence: 3, limit: 1 }))).toEqual([4]);
      expect(await w.headlessKeys(10)).toEqual([]); // the head rule held throughout
      expect(await w.repairHead({ tenantId: 'wc', projectionId: 'p', stateKey: 'x', sequence: 4 })).toBe(false);
    });

    it('claims a due delivery once: the attempt counted, the next try pushed past its deadline', async () => {
      await f.configure('wd', 'p', URL);
      await f.log('wd', 'p', ['k']);
      await w.enqueue('wd', 'p', 10, 1000);
      const [d] = await w.dueOfTenants(['wd'], 1000, 10);
      expect(await w.claim(d, 9000)).toBe(true);
      expect(await w.claim(d, 9000)).toBe(false); // another instance lost the race
      expect(await w.dueOfTenants(['wd'], 8999, 10)).toEqual([]);
      const [again] = await w.dueOfTenants(['wd'], 9000, 10);
      expect(again).toMatchObject({ sequence: 1, attempts: 1, nextAttemptAt: 9000 });
      expect(await w.claim(again, 12_000)).toBe(true); // the attempt timed out: claimed again
    });

    it('offers tenants with due deliveries in turn after the one served last, wrapping round', async () => {
      for (const t of ['wt-a', 'wt-b', 'wt-c']) {
        await f.configure(t, 'p', URL);
        await f.log(t, 'p', ['k1', 'k2', 'k3']);
        await w.enqueue(t, 'p', 10, t === 'wt-c' ? 5000 : 1000);
      }
      const mine = (ts: string[]) => ts.filter((t) => t.startsWith('wt-'));
      expect(mine(await w.tenantsWithDue(1000, 'wt-', 10))).toEqual(['wt-a', 'wt-b']); // wt-c not due yet
      expect(mine(await w.tenantsWithDue(5000, 'wt-a', 10))).toEqual(['wt-b', 'wt-c', 'wt-a']);
      expect(await w.tenantsWithDue(5000, 'wt-a', 1)).toEqual(['wt-b']);
      const due = await w.dueOfTenants(['wt-a', 'wt-b'], 1000, 2);
      expect(due.map((d) => [d.tenantId, d.sequence])).toEqual([
        ['wt-a', 1],
        ['wt-a', 2],
        ['wt-b', 1],
        ['wt-b', 2],
      ]);
    });

    it('writes a failed attempt only to the row it was made for', async () => {
      await f.configure('we', 'p', URL);
      await f.log('we', 'p', ['k']);
      await w.enqueue('we', 'p', 10, 1000);
      const [d] = await w.dueOfTenants(['we'], 1000, 10);
      await w.attemptFailed({ ...d, createdAt: 999 }, 'from before a resume', null, 1100);
      expect(await w.list('we', 'p', { afterSequence: 0, limit: 10 })).toMatchObject([{ sequence: 1, status: 'pending', lastError: null }]);
      expect(await w.pendingFailing('we', 'p')).toBe(false);
      await w.attemptFailed(d, 'HTTP 502', 5000, 1100);
      expect(await w.pendingFailing('we', 'p')).toBe(true);
    });

    it('replays dead deliveries after a sequence: a replayed one earlier than its key’s head becomes the head', async () => {
      await f.configure('wr', 'p', URL);
      await f.log('wr', 'p', ['k', 'k', 'j']);
      await w.enqueue('wr', 'p', 10, 1000);
      const [d1, d3] = await w.dueOfTenants(['wr'], 1000, 10);
      await w.attemptFailed(d1, 'HTTP 500', null, 1100); // dead: 2 is k's head
      await w.attemptFailed(d3, 'HTTP 500', null, 1100);
      expect(seqs(await w.dueOfTenants(['wr'], 1000, 10))).toEqual([2]);
      expect(await w.countDead('wr', 'p', 10)).toBe(2);
      expect(await w.countDead('wr', 'p', 1)).toBe(1);
      expect(await w.replay('wr', 'p', null, 1200, 1)).toBe(1); // only after sequence 1: 3
      expect(await w.replay('wr', 'p', 1, 1200)).toBe(1);
      expect(await w.replay('wr', 'p', 1, 1200)).toBe(0); // not dead any more
      expect(seqs(await w.dueOfTenants(['wr'], 1200, 10))).toEqual([1, 3]); // 1 again k's head, 2 waits behind it
      expect(await w.list('wr', 'p', { afterSequence: 0, limit: 10 })).toMatchObject([
        { sequence: 1, status: 'pending', attempts: 0, nextAttemptAt: 1200 },
        { sequence: 2, status: 'pending' },
        { sequence: 3, status: 'pending', attempts: 0 },
      ]);
      expect(await w.headlessKeys(10)).toEqual([]);
    });

    it('suspends an endpoint: pending deliveries dropped, no new ones, then resumed from a cursor', async () => {
      await f.configure('ws', 'p', URL);
      await f.log('ws', 'p', ['k', 'k', 'k', 'k']);
      await w.enqueue('ws', 'p', 3, 1000);
      const [d1] = await w.dueOfTenants(['ws'], 1000, 10);
      await w.delivered(d1, 1100);
      expect(await w.suspension('ws', 'p')).toBeNull();
      expect(await w.suspend('ws', 'p', 'PENDING_LIMIT: test', 1200)).toEqual({
        resumeSequence: 2,
        reason: 'PENDING_LIMIT: test',
        suspendedAt: 1200,
      });
      expect(await w.suspend('ws', 'p', 'again', 1300)).toEqual({ resumeSequence: 2, reason: 'PENDING_LIMIT: test', suspendedAt: 1200 });
      expect(await w.pendingCount('ws', 'p', 10)).toBe(0);
      expect(await w.backlogged(100)).not.toContainEqual({ tenantId: 'ws', projectionId: 'p' });
      expect(await w.enqueue('ws', 'p', 10, 1300)).toBe(1); // the cursor moves, no delivery is made
      expect(await w.pendingCount('ws', 'p', 10)).toBe(0);
      expect(await w.resume('ws', 'p', 1)).toBe(true);
      expect(await w.resume('ws', 'p', 1)).toBe(false);
      expect(await f.head('ws', 'p')).toMatchObject({ webhookSequence: 1 });
      expect(await w.enqueue('ws', 'p', 10, 1400)).toBe(3);
      expect(seqs(await w.list('ws', 'p', { status: 'pending', afterSequence: 0, limit: 10 }))).toEqual([2, 3, 4]);
      expect(seqs(await w.dueOfTenants(['ws'], 1400, 10))).toEqual([2]);
      expect(await w.pendingCount('ws', 'p', 2)).toBe(2); // counted up to the cap only
    });

    it('forgets delivered and dead deliveries after their keep time', async () => {
      await f.configure('wf', 'p', URL);
      await f.log('wf', 'p', ['a', 'b', 'c']);
      await w.enqueue('wf', 'p', 10, 1000);
      const [a, b, c] = await w.dueOfTenants(['wf'], 1000, 10);
      await w.delivered(a, 1100);
      await w.delivered(b, 1300);
      await w.attemptFailed(c, 'HTTP 500', null, 1100);
      const mine = async () => seqs(await w.list('wf', 'p', { afterSequence: 0, limit: 10 }));
      expect(await w.forgetDelivered(1200)).toBeGreaterThanOrEqual(1);
      expect(await mine()).toEqual([2, 3]);
      expect(await w.forgetDead(1100)).toBeGreaterThanOrEqual(0);
      expect(await mine()).toEqual([2, 3]); // died at 1100: not before it
      expect(await w.forgetDead(1101)).toBeGreaterThanOrEqual(1);
      expect(await mine()).toEqual([2]);
    });

    it('keeps secrets as given, the replaced one for the overlap', async () => {
      expect(await w.getSecret('wk', '')).toBeNull();
      expect(await w.ensureSecret('wk', '', 'sealed-1', 10)).toEqual({
        secret: 'sealed-1',
        previousSecret: null,
        previousUntil: null,
        rotatedAt: 10,
      });
      expect(await w.ensureSecret('wk', '', 'sealed-x', 11)).toMatchObject({ secret: 'sealed-1' });
      expect(await w.replaceSecret('wk', '', 'sealed-2', 20, 99)).toEqual({
        secret: 'sealed-2',
        previousSecret: 'sealed-1',
        previousUntil: 99,
        rotatedAt: 20,
      });
      expect(await w.replaceSecret('wk', '', 'sealed-2', 30, 120)).toMatchObject({ rotatedAt: 20 }); // the same secret: nothing changes
      expect(await w.replaceSecret('wk', 'p', 'iso-1', 40, 50)).toEqual({
        secret: 'iso-1',
        previousSecret: null,
        previousUntil: null,
        rotatedAt: 40,
      });
      expect(await w.getSecret('wk', '')).toMatchObject({ secret: 'sealed-2' });
    });
  });
}
