import { toStoredSettings } from '../../src/notifications/log/notification-settings';
import { Store } from '../../src/store/store.port';
import { describeIdempotencyStore } from './idempotency-store.conformance';
import { describeErasureStore } from './erasure.conformance';
import { describeFailedStates } from './failed-states.conformance';
import { describeEventWebhookStore, storeEventWebhookFixture } from './event-webhook-store.conformance';
import { describeMultiInstanceStore } from './multi-instance.conformance';
import { describeIdsAndTraceStore } from './ids-and-trace.conformance';
import { describeDcbStore } from './dcb.conformance';
import { describeLaneDeletion } from './lane-deletion.conformance';
import { describeProjectionStore } from './projection-store.conformance';
import { describeWebhookStore, storeWebhookFixture } from './webhook-store.conformance';
import { heldCommit, req, StoreHarness, tenant } from './store-fixtures';
import { elapse } from '../support/wait';

// The harness lives with the fixtures (a leaf every suite imports) so the suites form no cycle through its type.
export type { StoreHarness };

/** One suite, every adapter: what the event log promises, tested against the real engine. */
export function testEventStore(name: string, harness: StoreHarness): void {
  describe(`${name} store conformance`, () => {
    let store: Store;
    const extra: Store[] = [];
    beforeEach(async () => {
      store = await harness.fresh();
    });
    afterEach(async () => {
      for (const s of extra.splice(0)) await s.close();
      await store.close();
    });

    it('appends a first event at version 1 and position 1, inferring the type', async () => {
      const t = await tenant(store, 't1');
      const [o] = await store.events.appendMany([req(t, 'order-1')]);
      expect(o.ok).toBe(true);
      if (!o.ok) return;
      expect(o.result.aggregateType).toBe('order');
      expect(o.result.events[0]).toMatchObject({ version: 1, position: 1, eventType: 'Happened', data: '{"n":1}' });
      expect(o.result.events[0].eventId).toMatch(/^[0-9a-f-]{36}$/);
      expect(await store.events.streamInfo(t, 'order-1')).toEqual({ aggregateType: 'order', version: 1 });
      expect(await store.events.headPosition(t)).toBe(1);
    });

    it('decides each request of a group commit on its own', async () => {
      const t = await tenant(store, 't1');
      const out = await store.events.appendMany([
        req(t, 'a-1', { expectedVersion: 0 }),
        req(t, 'b-1', { expectedVersion: 3 }),
        req(t, 'a-1', {
          expectedVersion: 1,
          events: [
            { eventType: 'X', data: '{}' },
            { eventType: 'Y', data: '{}' },
          ],
        }),
        req(t, 'a-1', { aggregateType: 'other' }),
      ]);
      expect(out.map((o) => o.ok)).toEqual([true, false, true, false]);
      const conflict = out[1];
      expect(!conflict.ok && conflict.error.code).toBe('VERSION_CONFLICT');
      expect(!conflict.ok && conflict.error.details).toEqual({ expectedVersion: 3, actualVersion: 0 });
      expect(!out[3].ok && out[3].error.code).toBe('AGGREGATE_TYPE_MISMATCH');
      const events = await store.events.readStream(t, 'a-1', 1, 100);
      expect(events.map((e) => [e.version, e.position, e.eventType])).toEqual([
        [1, 1, 'Happened'],
        [2, 2, 'X'],
        [3, 3, 'Y'],
      ]);
      expect(await store.events.streamInfo(t, 'b-1')).toBeNull();
    });

    it('stores a batch atomically with contiguous versions and positions, all or nothing', async () => {
      const t = await tenant(store, 't1');
      const events = Array.from({ length: 50 }, (_, i) => ({ eventType: `E${i}`, data: `{"i":${i}}` }));
      const [ok] = await store.events.appendMany([req(t, 'acc-1', { events })]);
      expect(ok.ok && ok.result.events.map((e) => e.version)).toEqual(events.map((_, i) => i + 1));
      const [bad] = await store.events.appendMany([req(t, 'acc-1', { events, expectedVersion: 7 })]);
      expect(bad.ok).toBe(false);
      expect(await store.events.streamInfo(t, 'acc-1')).toEqual({ aggregateType: 'acc', version: 50 });
      expect((await store.events.readAll(t, 0, 1000)).length).toBe(50);
    });

    it('keeps correlation, causation and metadata', async () => {
      const t = await tenant(store, 't1');
      await store.events.appendMany([req(t, 'x-1', { correlationId: 'corr', causationId: 'cause', metadata: '{"user":"u1"}' })]);
      const [e] = await store.events.readStream(t, 'x-1', 1, 10);
      expect(e).toMatchObject({ correlationId: 'corr', causationId: 'cause', metadata: '{"user":"u1"}' });
      expect(Math.abs(e.timestamp - Date.now())).toBeLessThan(60_000);
    });

    it('pages a stream by version', async () => {
      const t = await tenant(store, 't1');
      const events = Array.from({ length: 10 }, (_, i) => ({ eventType: 'E', data: `{"i":${i}}` }));
      await store.events.appendMany([req(t, 'p-1', { events })]);
      const page = await store.events.readStream(t, 'p-1', 4, 3);
      expect(page.map((e) => e.version)).toEqual([4, 5, 6]);
      expect(await store.events.readStream(t, 'p-1', 11, 3)).toEqual([]);
    });

    it('reads the tenant log by position, forwards and backwards, filtered by aggregate and event types', async () => {
      const t = await tenant(store, 't1');
      const other = await tenant(store, 't2');
      // 3 aggregate types × 4 event types, interleaved, in separate commits; another tenant's events in between.
      const want: { position: number; type: string; eventType: string }[] = [];
      for (let i = 0; i < 24; i++) {
        const type = ['order', 'cart', 'user'][i % 3];
        const eventType = ['A', 'B', 'C', 'D'][i % 4];
        const [o] = await store.events.appendMany([
          req(t, `${type}-${i % 2}`, { aggregateType: type, events: [{ eventType, data: '{}' }] }),
        ]);
        want.push({ position: o.ok ? o.result.events[0].position : -1, type, eventType });
        await store.events.appendMany([req(other, `order-x`, { events: [{ eventType, data: '{}' }] })]);
      }
      const read = async (q: Parameters<typeof store.events.readLog>[1]) => (await store.events.readLog(t, q)).map((e) => e.position);
      const where = (pred: (w: (typeof want)[number]) => boolean) => want.filter(pred).map((w) => w.position);

      expect(await read({ direction: 'forward', afterPosition: 0, limit: 100 })).toEqual(where(() => true));
      expect(await read({ direction: 'forward', afterPosition: 5, limit: 3 })).toEqual([6, 7, 8]);
      expect(await read({ direction: 'backward', limit: 3 })).toEqual([24, 23, 22]);
      expect(await read({ direction: 'backward', beforePosition: 5, limit: 100 })).toEqual([4, 3, 2, 1]);
      expect(await read({ direction: 'forward', afterPosition: 24, limit: 10 })).toEqual([]);
      expect(await read({ direction: 'forward', afterPosition: 0, limit: 100, aggregateTypes: ['cart'] })).toEqual(
        where((w) => w.type === 'cart'),
      );
      expect(await read({ direction: 'forward', afterPosition: 0, limit: 100, eventTypes: ['B', 'D'] })).toEqual(
        where((w) => w.eventType === 'B' || w.eventType === 'D'),
      );
      // Several values of the driving filter: each limited, merged by position, the limit kept.
      expect(await read({ direction: 'forward', afterPosition: 2, limit: 5, eventTypes: ['A', 'B', 'C'] })).toEqual(
        where((w) => w.position > 2 && w.eventType !== 'D').slice(0, 5),
      );
      expect(await read({ direction: 'backward', beforePosition: 20, limit: 4, aggregateTypes: ['order', 'user'] })).toEqual(
        where((w) => w.position < 20 && w.type !== 'cart')
          .reverse()
          .slice(0, 4),
      );
      expect(
        await read({ direction: 'forward', afterPosition: 0, limit: 100, aggregateTypes: ['order', 'cart'], eventTypes: ['A', 'C'] }),
      ).toEqual(where((w) => w.type !== 'user' && (w.eventType === 'A' || w.eventType === 'C')));
      expect(await read({ direction: 'forward', afterPosition: 0, limit: 100, aggregateTypes: ['nothing'] })).toEqual([]);
      // The other tenant's log is its own, numbered from 1.
      expect((await store.events.readLog(other, { direction: 'forward', afterPosition: 0, limit: 100 })).map((e) => e.position)).toEqual(
        Array.from({ length: 24 }, (_, i) => i + 1),
      );
      // A row as readAll has it.
      expect(await store.events.readLog(t, { direction: 'forward', afterPosition: 0, limit: 2 })).toEqual(
        await store.events.readAll(t, 0, 2),
      );
    });

    it('reads a stream backwards from a version', async () => {
      const t = await tenant(store, 't1');
      const events = Array.from({ length: 10 }, (_, i) => ({ eventType: 'E', data: `{"i":${i}}` }));
      await store.events.appendMany([req(t, 'p-1', { events })]);
      expect((await store.events.readStreamBackward(t, 'p-1', 6, 3)).map((e) => e.version)).toEqual([6, 5, 4]);
      expect((await store.events.readStreamBackward(t, 'p-1', 100, 2)).map((e) => e.version)).toEqual([10, 9]);
      expect(await store.events.readStreamBackward(t, 'p-2', 100, 2)).toEqual([]);
    });

    it('gives versions 1..N with no gap or duplicate under concurrent writers', async () => {
      const t = await tenant(store, 't1');
      const writers = [store];
      if (harness.concurrentInstances) {
        for (let i = 0; i < 3; i++) {
          const s = await harness.sameStorage(store);
          extra.push(s);
          writers.push(s);
        }
      }
      const calls = Array.from({ length: 60 }, (_, i) =>
        writers[i % writers.length].events.appendMany([req(t, 'hot-1'), req(t, `cold-${i}`)]),
      );
      const results = (await Promise.all(calls)).flat();
      expect(results.every((r) => r.ok)).toBe(true);
      const hot = await store.events.readStream(t, 'hot-1', 1, 1000);
      expect(hot.map((e) => e.version)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
      const all = await store.events.readAll(t, 0, 1000);
      expect(all.map((e) => e.position)).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
    });

    it('lets exactly one of several writers expecting the same version win', async () => {
      const t = await tenant(store, 't1');
      const writers = [store];
      if (harness.concurrentInstances) {
        const s = await harness.sameStorage(store);
        extra.push(s);
        writers.push(s);
      }
      const calls = Array.from({ length: 10 }, (_, i) =>
        writers[i % writers.length].events.appendMany([req(t, 'race-1', { expectedVersion: 0 })]),
      );
      const results = (await Promise.all(calls)).flat();
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.error.code === 'VERSION_CONFLICT')).toBe(true);
    });

    it('never shows one tenant another tenant’s events, streams or positions', async () => {
      const a = await tenant(store, 'ta');
      const b = await tenant(store, 'tb');
      await store.events.appendMany([req(a, 'secret-1'), req(a, 'secret-1'), req(b, 'mine-1')]);
      expect(await store.events.readStream(b, 'secret-1', 1, 10)).toEqual([]);
      expect(await store.events.streamInfo(b, 'secret-1')).toBeNull();
      expect((await store.events.readAll(b, 0, 10)).map((e) => e.aggregateId)).toEqual(['mine-1']);
      expect(await store.events.headPosition(b)).toBe(1);
      expect(await store.events.headPosition(a)).toBe(2);
      // Same aggregate id in two tenants: two independent streams.
      const [o] = await store.events.appendMany([req(b, 'secret-1', { expectedVersion: 0 })]);
      expect(o.ok).toBe(true);
    });

    it('keeps what it acknowledged across a reopen', async () => {
      const t = await tenant(store, 't1');
      await store.events.appendMany([req(t, 'd-1'), req(t, 'd-1')]);
      const reopened = await harness.sameStorage(store);
      extra.push(reopened);
      await reopened.migrate(); // idempotent
      expect((await reopened.events.readStream(t, 'd-1', 1, 10)).map((e) => e.version)).toEqual([1, 2]);
      expect((await reopened.tenants.getTenant(t))?.name).toBe('tenant t1');
    });

    it('stores tenants and api keys by hash, and revokes them', async () => {
      const t = await tenant(store, 't1');
      await store.tenants.addKey({ keyId: 'k1', tenantId: t, keyHash: 'h'.repeat(64), createdAt: 1 });
      expect(await store.tenants.findKeyByHash('h'.repeat(64))).toMatchObject({ keyId: 'k1', tenantId: t, revokedAt: null });
      expect(await store.tenants.findKeyByHash('x'.repeat(64))).toBeNull();
      expect(await store.tenants.revokeKey('other', 'k1', 5)).toBe(false);
      expect(await store.tenants.revokeKey(t, 'k1', 5)).toBe(true);
      expect(await store.tenants.revokeKey(t, 'k1', 6)).toBe(false);
      expect((await store.tenants.findKeyByHash('h'.repeat(64)))?.revokedAt).toBe(5);
      expect((await store.tenants.listTenants()).map((x) => x.tenantId)).toEqual([t]);
    });

    it('keeps a tenant’s limit overrides, replaced whole, only for a tenant that exists', async () => {
      const t = await tenant(store, 't1');
      const other = await tenant(store, 't2');
      expect(await store.tenants.getLimits(t)).toBeNull();
      expect(await store.tenants.putLimits({ tenantId: t, limits: '{"streams":5}', updatedAt: 1_000 })).toBe(true);
      expect(
        await store.tenants.putLimits({ tenantId: t, limits: '{"appendRequests":{"quota":10,"windowSeconds":1}}', updatedAt: 2_000 }),
      ).toBe(true);
      expect(await store.tenants.getLimits(t)).toEqual({
        tenantId: t,
        limits: '{"appendRequests":{"quota":10,"windowSeconds":1}}',
        updatedAt: 2_000,
      });
      expect(await store.tenants.getLimits(other)).toBeNull();
      expect(await store.tenants.putLimits({ tenantId: 'nobody', limits: '{}', updatedAt: 3_000 })).toBe(false);
      expect(await store.tenants.getLimits('nobody')).toBeNull();
    });

    it('keeps uploads per tenant, with their sources, until compiled or failed', async () => {
      const t = await tenant(store, 't1');
      const sources = [{ path: 'A.cs', content: 'class A {}' }];
      await store.uploads.create({ uploadId: 'u1', tenantId: t, kind: 'reducer', sources, meta: { x: 1 }, createdAt: 1000 });
      await store.uploads.create({ uploadId: 'u2', tenantId: t, kind: 'projection', sources, meta: {}, createdAt: 2000 });
      expect((await store.uploads.oldestPending(t))?.uploadId).toBe('u1');
      expect(await store.uploads.countPending(t)).toBe(2);
      expect(await store.uploads.pendingTenants()).toEqual([t]);
      expect(await store.uploads.get('other', 'u1')).toBeNull();
      // The same upload id in another tenant is another upload.
      await store.uploads.create({ uploadId: 'u1', tenantId: 'other', kind: 'reducer', sources, meta: {}, createdAt: 1500 });
      expect(await store.uploads.countPending()).toBe(3); // all tenants: the compile queue's depth
      const dll = Buffer.from([0x4d, 0x5a, 0, 1, 2, 255]);
      const discovered = [{ className: 'A', stateTypeName: 'S', kind: 'reducer' as const, aggregateType: 'a' }];
      const warning = { severity: 'warning' as const, code: 'CS8618', message: 'w', file: 'A.cs', line: 2, column: 5 };
      const error = {
        severity: 'error' as const,
        code: 'ES0001',
        message: 'forbidden API',
        file: null,
        line: null,
        column: null,
        hint: 'h',
      };
      await store.uploads.markCompiled(t, 'u1', { discovered, assembly: dll, assemblySha256: 'abc', at: 3000, diagnostics: [warning] });
      await store.uploads.markFailed(t, 'u2', { compilationError: 'A.cs(1,1): error CS0001: x', at: 4000, diagnostics: [error, warning] });
      expect(await store.uploads.get(t, 'u1')).toMatchObject({
        status: 'compiled',
        discovered,
        diagnostics: [warning],
        sources,
        meta: { x: 1 },
        compiledAt: 3000,
        createdAt: 1000,
      });
      expect(await store.uploads.get(t, 'u2')).toMatchObject({
        status: 'failed',
        compilationError: 'A.cs(1,1): error CS0001: x',
        discovered: null,
        diagnostics: [error, warning],
      });
      expect(await store.uploads.getAssembly(t, 'u1')).toEqual(dll);
      expect(await store.uploads.getAssembly('other', 'u1')).toBeNull();
      expect(await store.uploads.getAssembly(t, 'u2')).toBeNull();
      expect(await store.uploads.pendingTenants()).toEqual(['other']);
      expect(await store.uploads.oldestPending(t)).toBeNull();
      expect(await store.uploads.countPending(t)).toBe(0);
      expect(await store.uploads.countPending()).toBe(1);
      expect((await store.uploads.oldestPending('other'))?.uploadId).toBe('u1');
    });

    it('gives each pending upload to one claimer, even when several instances claim at once; a lapsed claim is taken over', async () => {
      const t = await tenant(store, 't1');
      const sources = [{ path: 'A.cs', content: 'class A {}' }];
      for (let i = 0; i < 6; i++)
        await store.uploads.create({ uploadId: `u${i}`, tenantId: t, kind: 'reducer', sources, meta: {}, createdAt: 1000 + i });
      const other = await harness.sameStorage(store);
      extra.push(other);
      // Two instances, three claimers each, all at once: every upload is claimed exactly once.
      const claimers = [store, store, store, other, other, other].map((s, i) =>
        s.uploads.claimOldest(t, `owner-${i % 2}`, 5_000, 65_000).then((u) => u?.uploadId ?? null),
      );
      const got = (await Promise.all(claimers)).filter((u) => u !== null);
      expect(got.sort()).toEqual(['u0', 'u1', 'u2', 'u3', 'u4', 'u5']);
      // All claimed and live: nothing to claim, no tenant to turn to; still pending for the cap.
      expect(await other.uploads.claimOldest(t, 'owner-2', 6_000, 66_000)).toBeNull();
      expect(await store.uploads.pendingTenants(6_000)).toEqual([]);
      expect(await store.uploads.pendingTenants()).toEqual([t]);
      expect(await store.uploads.countPending(t)).toBe(6);
      // Recording under a claim: only its owner's write counts.
      const dll = Buffer.from([1, 2, 3]);
      const rec = { discovered: [], assembly: dll, assemblySha256: 'x', at: 7_000 };
      const results = await Promise.all(
        got.map(async (id) => [
          await store.uploads.markCompiled(t, id, { ...rec, claim: 'owner-0' }),
          await other.uploads.markCompiled(t, id, { ...rec, claim: 'owner-1' }),
        ]),
      );
      // Each upload recorded by exactly one of the two owners (the one holding its claim).
      expect(results.every(([a, b]) => a !== b)).toBe(true);
      expect(await store.uploads.countPending(t)).toBe(0);
      // A claim that lapsed (its instance died) is taken by another; the dead owner can no longer record.
      await store.uploads.create({ uploadId: 'late', tenantId: t, kind: 'reducer', sources, meta: {}, createdAt: 9_000 });
      expect((await store.uploads.claimOldest(t, 'dead', 10_000, 20_000))?.uploadId).toBe('late');
      expect(await other.uploads.claimOldest(t, 'alive', 19_999, 79_999)).toBeNull();
      expect(await store.uploads.pendingTenants(20_001)).toEqual([t]);
      expect((await other.uploads.claimOldest(t, 'alive', 20_001, 80_001))?.uploadId).toBe('late');
      expect(await store.uploads.markFailed(t, 'late', { compilationError: 'x', at: 21_000, claim: 'dead' })).toBe(false);
      // A claim given up (a compile left for a later turn) can be taken at once.
      await store.uploads.releaseClaim(t, 'late', 'alive');
      expect((await store.uploads.claimOldest(t, 'third', 21_000, 81_000))?.uploadId).toBe('late');
      expect(await store.uploads.markFailed(t, 'late', { compilationError: 'x', at: 22_000, claim: 'third' })).toBe(true);
      // Recorded without diagnostics (an earlier caller): none.
      expect(await store.uploads.get(t, 'late')).toMatchObject({ status: 'failed', compilationError: 'x', diagnostics: null });
    });

    it('writes an aggregate’s state in the append’s own transaction, only from the version it was computed on', async () => {
      const t = await tenant(store, 't1');
      const snap = (baseVersion: number, state: string) => ({ bindingId: 'b1', baseVersion, state });
      const [first] = await store.events.appendMany([req(t, 'acct-1', { snapshot: snap(0, '{"n":1}') })]);
      expect(first.ok).toBe(true);
      expect(await store.snapshots.get(t, 'acct-1')).toMatchObject({
        bindingId: 'b1',
        version: 1,
        state: '{"n":1}',
        failedVersion: null,
        aggregateType: 'acct',
      });
      // Computed on version 0, but the aggregate is at 1: refused, nothing stored.
      const [stale] = await store.events.appendMany([req(t, 'acct-1', { snapshot: snap(0, '{"n":99}') })]);
      expect(!stale.ok && stale.error.code).toBe('STATE_STALE');
      expect(await store.events.streamInfo(t, 'acct-1')).toEqual({ aggregateType: 'acct', version: 1 });
      const [two] = await store.events.appendMany([
        req(t, 'acct-1', {
          events: [
            { eventType: 'A', data: '{}' },
            { eventType: 'B', data: '{}' },
          ],
          snapshot: { ...snap(1, '{"n":2}'), failedVersion: 3, error: 'boom' },
        }),
      ]);
      expect(two.ok).toBe(true);
      expect(await store.snapshots.get(t, 'acct-1')).toMatchObject({ version: 3, state: '{"n":2}', failedVersion: 3, error: 'boom' });
      expect(await store.snapshots.get('other', 'acct-1')).toBeNull();
    });

    it('keeps bindings per tenant and never lets catch-up regress a newer snapshot', async () => {
      const t = await tenant(store, 't1');
      await store.bindings.put({ tenantId: t, aggregateType: 'acct', reducerId: 'r1', className: 'A', bindingId: 'b1', boundAt: 1000 });
      await store.bindings.put({ tenantId: t, aggregateType: 'acct', reducerId: 'r2', className: 'B', bindingId: 'b2', boundAt: 2000 });
      expect(await store.bindings.get(t, 'acct')).toEqual({
        tenantId: t,
        aggregateType: 'acct',
        reducerId: 'r2',
        className: 'B',
        bindingId: 'b2',
        boundAt: 2000,
      });
      expect(await store.bindings.get('other', 'acct')).toBeNull();

      const base = { aggregateId: 'acct-1', aggregateType: 'acct', failedVersion: null, error: null, updatedAt: 5 };
      await store.snapshots.putIfNewer(t, { ...base, bindingId: 'b1', version: 5, state: '{"v":5}' });
      await store.snapshots.putIfNewer(t, { ...base, bindingId: 'b1', version: 4, state: '{"v":4}' });
      expect((await store.snapshots.get(t, 'acct-1'))?.state).toBe('{"v":5}');
      await store.snapshots.putIfNewer(t, { ...base, bindingId: 'b2', version: 2, state: '{"b2":2}' });
      expect(await store.snapshots.get(t, 'acct-1')).toMatchObject({ bindingId: 'b2', version: 2 });

      await store.events.appendMany(['acct-3', 'acct-1', 'other-1', 'acct-2'].map((id) => req(t, id)));
      expect((await store.snapshots.listAggregates(t, 'acct', '', 2)).map((a) => a.aggregateId)).toEqual(['acct-1', 'acct-2']);
      expect(await store.snapshots.listAggregates(t, 'acct', 'acct-2', 10)).toEqual([{ aggregateId: 'acct-3', version: 1 }]);
    });

    describeIdsAndTraceStore(() => store);
    describeDcbStore(() => store, harness, extra);
    describeFailedStates(() => store);
    describeProjectionStore(() => store);
    describeLaneDeletion(() => store);
    describeMultiInstanceStore(() => store, harness, extra);
    describeIdempotencyStore(() => store, harness, extra);
    describeErasureStore(() => store, harness, extra);
    describeEventWebhookStore(() => storeEventWebhookFixture(store, harness, extra));
    describeWebhookStore(() => storeWebhookFixture(store));

    it('logs state changes gap-free, exactly once, only for the versions that speak for the projection', async () => {
      const t = await tenant(store, 't1');
      await store.events.appendMany([1, 2, 3, 4, 5, 6].map((i) => req(t, `order-${i}`)));
      const v1 = { versionId: 'v1', projectionId: 'p1', tenantId: t, className: 'C', targetPosition: 0, createdAt: 1 };
      const notify = toStoredSettings({ webhookUrl: 'http://x.example/h', isolated: false, sse: true });
      await store.projections.deploy({ tenantId: t, projectionId: 'p1', name: 'totals', version: v1, ...notify });
      expect((await store.projections.get(t, 'p1'))?.notifyConfig).toContain('x.example');
      const change = (position: number) => ({
        position,
        aggregateId: `order-${position}`,
        aggregateType: 'order',
        version: 1,
        timestamp: 100 + position,
        state: `{"n":${position}}`,
      });
      await store.lanes.inbox.route(
        { tenantId: t, versionId: 'v1' },
        [1, 2, 3, 4, 5, 6].map((position) => ({ key: position % 2 ? 'odd' : 'even', position })),
        6,
      );
      await store.lanes.runs.laneWork({ tenantId: t, versionId: 'v1', key: 'odd' }, 10);
      await store.lanes.runs.laneWork({ tenantId: t, versionId: 'v1', key: 'even' }, 10);
      const applied = (key: string, positions: number[], versionId = 'v1', fromPosition = 0) =>
        store.lanes.runs.applied(
          { tenantId: t, versionId, key },
          {
            state: '{}',
            fromPosition,
            appliedPosition: positions[positions.length - 1],
            updatedAt: 1,
            notify: { projectionId: 'p1', changes: positions.map(change) },
          },
        );
      // Lanes of one projection commit concurrently: sequences still have no hole and follow commit order.
      await Promise.all([applied('odd', [1, 3]), applied('even', [2])]); // (one group commit on SQLite)
      expect(await applied('odd', [1, 3])).toBe(false); // a second run of the same work logs nothing
      const log = await store.notifications.read(t, 'p1', 0, 100);
      expect(log.map((n) => n.sequence)).toEqual([1, 2, 3]);
      expect(log.map((n) => n.position).sort()).toEqual([1, 2, 3]);
      const first = log.find((n) => n.position === 1)!;
      expect(first).toEqual({
        sequence: first.sequence,
        projectionId: 'p1',
        aggregateId: 'order-1',
        aggregateType: 'order',
        stateKey: 'odd',
        version: 1,
        position: 1,
        state: '{"n":1}',
        timestamp: 101,
      });
      expect(await store.notifications.head(t, 'p1')).toEqual({ lastSequence: 3, prunedSequence: 0, webhookSequence: 0 });
      expect(await store.notifications.read(t, 'p1', 2, 100)).toHaveLength(1);
      expect(await store.notifications.read('other', 'p1', 0, 100)).toEqual([]);

      // A redeploy (v2, target 4): v1 speaks up to 4, v2 after it: each change is logged once.
      await store.projections.deploy({
        tenantId: t,
        projectionId: 'p1',
        name: 'totals',
        version: { ...v1, versionId: 'v2', targetPosition: 4 },
        ...notify,
      });
      await store.lanes.inbox.route(
        { tenantId: t, versionId: 'v2' },
        [5, 6].map((position) => ({ key: position % 2 ? 'odd' : 'even', position })),
        6,
      );
      await store.lanes.runs.laneWork({ tenantId: t, versionId: 'v2', key: 'odd' }, 10);
      await store.lanes.runs.laneWork({ tenantId: t, versionId: 'v2', key: 'even' }, 10);
      await applied('even', [4, 6], 'v1', 2); // v1: only 4 is its to tell
      await applied('odd', [5], 'v2'); // v2 tells 5
      expect((await store.notifications.read(t, 'p1', 3, 100)).map((n) => [n.sequence, n.position])).toEqual([
        [4, 4],
        [5, 5],
      ]);

      // Webhook deliveries: the cursor turns notifications into pending deliveries, once.
      expect(await store.webhooks.backlogged(10)).toEqual([{ tenantId: t, projectionId: 'p1' }]);
      expect(await store.webhooks.enqueue(t, 'p1', 3, 1000)).toBe(3);
      expect(await store.webhooks.enqueue(t, 'p1', 3, 1000)).toBe(2);
      expect(await store.webhooks.enqueue(t, 'p1', 3, 1000)).toBe(0);
      expect(await store.webhooks.backlogged(10)).toEqual([]);
      // Order per key: a key's later delivery is not due while an earlier one is pending.
      const due = await store.webhooks.dueOfTenants([t], 1000, 10);
      const byKey = new Map<string, number[]>();
      for (const d of due) byKey.set(d.stateKey, [...(byKey.get(d.stateKey) ?? []), d.sequence]);
      for (const seqs of byKey.values()) expect(seqs).toHaveLength(1);
      const d0 = due[0];
      expect(await store.webhooks.claim(d0, 5000)).toBe(true);
      expect(await store.webhooks.claim(d0, 5000)).toBe(false); // another instance lost the race
      await store.webhooks.attemptFailed({ ...d0, attempts: 1 }, 'HTTP 500', null, 1100); // dead-lettered
      expect(
        (await store.webhooks.list(t, 'p1', { status: 'dead', afterSequence: 0, limit: 10 })).map((d) => [
          d.sequence,
          d.attempts,
          d.lastError,
        ]),
      ).toEqual([[d0.sequence, 1, 'HTTP 500']]);
      expect(await store.webhooks.replay(t, 'p1', null, 1200)).toBe(1);
      const again = (await store.webhooks.dueOfTenants([t], 1200, 10)).find((d) => d.sequence === d0.sequence)!;
      expect(again).toMatchObject({ status: 'pending', attempts: 0 });
      await store.webhooks.delivered(again, 1300);

      // Retention removes a row only past both bounds (the newest keepCount always stay), and keeps what deliveries still need.
      const aged = Date.now() + 1;
      expect(await store.notifications.headsToPrune({ keepCount: 5, removeBefore: aged })).toEqual([]);
      expect(await store.notifications.headsToPrune({ keepCount: 4, removeBefore: 0 })).toEqual([]);
      expect(await store.notifications.headsToPrune({ keepCount: 4, removeBefore: aged })).toEqual([{ tenantId: t, projectionId: 'p1' }]);
      expect(await store.notifications.prune(t, 'p1', { keepCount: 1, removeBefore: 0 })).toBe(0);
      expect(await store.notifications.prune(t, 'p1', { keepCount: 1, removeBefore: aged })).toBeLessThan(4);
      for (const d of await store.webhooks.list(t, 'p1', { status: 'pending', afterSequence: 0, limit: 10 }))
        await store.webhooks.delivered(d, 1400);
      expect(await store.notifications.prune(t, 'p1', { keepCount: 1, removeBefore: aged })).toBe(4);
      expect((await store.notifications.read(t, 'p1', 0, 10)).map((n) => n.sequence)).toEqual([5]);
      expect(await store.notifications.head(t, 'p1')).toMatchObject({ lastSequence: 5, prunedSequence: 4 });
      expect(await store.notifications.headsToPrune({ keepCount: 1, removeBefore: aged })).toEqual([]);
      expect(await store.webhooks.forgetDelivered(2000)).toBe(5);

      // Secrets: stored as given (sealed by the caller), the replaced one kept for the overlap.
      expect(await store.webhooks.ensureSecret(t, '', 'sealed-1', 10)).toMatchObject({ secret: 'sealed-1', previousSecret: null });
      expect(await store.webhooks.ensureSecret(t, '', 'sealed-x', 11)).toMatchObject({ secret: 'sealed-1' });
      expect(await store.webhooks.replaceSecret(t, '', 'sealed-2', 20, 99)).toEqual({
        secret: 'sealed-2',
        previousSecret: 'sealed-1',
        previousUntil: 99,
        rotatedAt: 20,
      });
      await store.projections.delete(t, 'p1');
      expect(await store.notifications.head(t, 'p1')).toBeNull();
      expect(await store.notifications.read(t, 'p1', 0, 10)).toEqual([]);
    });

    it('suspends a webhook endpoint: pending deliveries dropped, the log not pinned, resumed from a cursor; dead ones counted and expired', async () => {
      const t = 'wh-suspend';
      const notify = toStoredSettings({ webhookUrl: 'https://x.example/hook', isolated: false, sse: false });
      const v1 = { tenantId: t, versionId: 's1', projectionId: 'ps', className: 'C', targetPosition: 0, createdAt: 1 };
      await store.projections.deploy({ tenantId: t, projectionId: 'ps', name: 'suspended', version: v1, ...notify });
      await store.lanes.inbox.route(
        { tenantId: t, versionId: 's1' },
        [1, 2, 3, 4, 5, 6].map((position) => ({ key: 'k', position })),
        6,
      );
      await store.lanes.runs.laneWork({ tenantId: t, versionId: 's1', key: 'k' }, 10);
      const change = (position: number) => ({
        position,
        aggregateId: `o-${position}`,
        aggregateType: 'order',
        version: 1,
        timestamp: position,
        state: '{}',
      });
      await store.lanes.runs.applied(
        { tenantId: t, versionId: 's1', key: 'k' },
        {
          state: '{}',
          fromPosition: 0,
          appliedPosition: 6,
          updatedAt: 1,
          notify: { projectionId: 'ps', changes: [1, 2, 3, 4, 5, 6].map(change) },
        },
      );
      expect(await store.webhooks.enqueue(t, 'ps', 4, 1000)).toBe(4);
      expect(await store.webhooks.pendingCount(t, 'ps', 10)).toBe(4);
      expect(await store.webhooks.pendingCount(t, 'ps', 2)).toBe(2); // counted up to the cap only
      expect(await store.webhooks.pendingFailing(t, 'ps')).toBe(false);
      const [d1, d2] = await store.webhooks.list(t, 'ps', { status: 'pending', afterSequence: 0, limit: 10 });
      await store.webhooks.delivered(d1, 1100);
      await store.webhooks.attemptFailed({ ...d2, attempts: 1 }, 'HTTP 500', 5000, 1100);
      expect(await store.webhooks.pendingFailing(t, 'ps')).toBe(true);
      const aged = Date.now() + 1;
      expect(await store.notifications.prune(t, 'ps', { keepCount: 2, removeBefore: aged })).toBe(1); // sequence 2 is pending

      expect(await store.webhooks.suspension(t, 'ps')).toBeNull();
      expect(await store.webhooks.suspend(t, 'ps', 'PENDING_LIMIT: test', 1200)).toEqual({
        resumeSequence: 2,
        reason: 'PENDING_LIMIT: test',
        suspendedAt: 1200,
      });
      expect(await store.webhooks.suspend(t, 'ps', 'again', 1300)).toMatchObject({ resumeSequence: 2, suspendedAt: 1200 }); // stays as it was
      expect(await store.webhooks.pendingCount(t, 'ps', 10)).toBe(0);
      expect(await store.webhooks.backlogged(100)).not.toContainEqual({ tenantId: t, projectionId: 'ps' });
      expect(await store.webhooks.enqueue(t, 'ps', 10, 1300)).toBe(2); // the cursor moves, but no delivery is made while suspended
      expect(await store.webhooks.pendingCount(t, 'ps', 10)).toBe(0);
      // Suspended: retention passes its cursor; the newest 2 stay.
      expect(await store.notifications.prune(t, 'ps', { keepCount: 2, removeBefore: aged })).toBe(4);

      expect(await store.webhooks.resume(t, 'ps', 4)).toBe(true);
      expect(await store.webhooks.resume(t, 'ps', 4)).toBe(false);
      expect(await store.webhooks.suspension(t, 'ps')).toBeNull();
      expect(await store.notifications.head(t, 'ps')).toMatchObject({ webhookSequence: 4 });
      expect(await store.webhooks.enqueue(t, 'ps', 10, 1400)).toBe(2);
      expect((await store.webhooks.list(t, 'ps', { status: 'pending', afterSequence: 0, limit: 10 })).map((d) => d.sequence)).toEqual([
        5, 6,
      ]);
      expect((await store.webhooks.list(t, 'ps', { status: 'delivered', afterSequence: 0, limit: 10 })).map((d) => d.sequence)).toEqual([
        1,
      ]);

      // Dead deliveries: counted at or below a sequence, replayed only above one, expired by age.
      const [d5, d6] = await store.webhooks.list(t, 'ps', { status: 'pending', afterSequence: 0, limit: 10 });
      await store.webhooks.attemptFailed(d5, 'HTTP 500', null, 1500);
      await store.webhooks.attemptFailed(d6, 'HTTP 500', null, 1600);
      expect(await store.webhooks.countDead(t, 'ps', 5)).toBe(1);
      expect(await store.webhooks.replay(t, 'ps', null, 1700, 5)).toBe(1); // 6 only
      expect((await store.webhooks.list(t, 'ps', { status: 'dead', afterSequence: 0, limit: 10 })).map((d) => d.sequence)).toEqual([5]);
      expect(await store.webhooks.forgetDead(1501)).toBe(1);
      expect(await store.webhooks.countDead(t, 'ps', 100)).toBe(0);
      await store.webhooks.suspend(t, 'ps', 'to be deleted', 1800);
      await store.projections.delete(t, 'ps');
      expect(await store.webhooks.suspension(t, 'ps')).toBeNull();
    });

    it('writes an attempt’s failure only to the delivery it was made for, not to one made again after a resume', async () => {
      const t = 'wh-stale';
      const notifyConfig = JSON.stringify({ webhookUrl: 'https://x.example/hook', isolated: false, sse: false });
      const v1 = { tenantId: t, versionId: 'st1', projectionId: 'pst', className: 'C', targetPosition: 0, createdAt: 1 };
      await store.projections.deploy({ tenantId: t, projectionId: 'pst', name: 'stale', version: v1, notifyConfig });
      await store.lanes.inbox.route(
        { tenantId: t, versionId: 'st1' },
        [1, 2].map((position) => ({ key: `k${position}`, position })),
        2,
      );
      for (const key of ['k1', 'k2']) {
        const position = Number(key.slice(1));
        await store.lanes.runs.laneWork({ tenantId: t, versionId: 'st1', key }, 10);
        await store.lanes.runs.applied(
          { tenantId: t, versionId: 'st1', key },
          {
            state: '{}',
            fromPosition: 0,
            appliedPosition: position,
            updatedAt: 1,
            notify: {
              projectionId: 'pst',
              changes: [{ position, aggregateId: `o-${position}`, aggregateType: 'order', version: 1, timestamp: position, state: '{}' }],
            },
          },
        );
      }
      expect(await store.webhooks.enqueue(t, 'pst', 10, 1000)).toBe(2);
      const inFlight = await store.webhooks.list(t, 'pst', { status: 'pending', afterSequence: 0, limit: 10 });
      for (const d of inFlight) expect(await store.webhooks.claim(d, 9000)).toBe(true); // attempts under way
      // Suspended meanwhile (the pending rows dropped), resumed from the start: the same sequences again.
      await store.webhooks.suspend(t, 'pst', 'PENDING_LIMIT: test', 1100);
      expect(await store.webhooks.resume(t, 'pst', 0)).toBe(true);
      expect(await store.webhooks.enqueue(t, 'pst', 10, 1200)).toBe(2);
      // The attempts from before fail now (the receiver was down): the new rows are not touched.
      await store.webhooks.attemptFailed({ ...inFlight[0], attempts: 1 }, 'HTTP 503', 5000, 1300);
      await store.webhooks.attemptFailed({ ...inFlight[1], attempts: 1 }, 'HTTP 503', null, 1300);
      const fresh = await store.webhooks.list(t, 'pst', { status: 'pending', afterSequence: 0, limit: 10 });
      expect(fresh.map((d) => [d.sequence, d.attempts, d.lastError, d.createdAt])).toEqual([
        [1, 0, null, 1200],
        [2, 0, null, 1200],
      ]);
      expect(await store.webhooks.pendingFailing(t, 'pst')).toBe(false);
      // The new rows' own outcomes are written.
      await store.webhooks.delivered(fresh[0], 1400);
      await store.webhooks.attemptFailed(fresh[1], 'HTTP 500', 5000, 1400);
      expect((await store.webhooks.list(t, 'pst', { status: 'delivered', afterSequence: 0, limit: 10 })).map((d) => d.sequence)).toEqual([
        1,
      ]);
      expect(await store.webhooks.pendingFailing(t, 'pst')).toBe(true);
      await store.projections.delete(t, 'pst');
    });

    it('names the tenants with due webhook deliveries in turn order, and reads each one’s share', async () => {
      const notify = toStoredSettings({ webhookUrl: 'http://x.example/h', isolated: false, sse: false });
      /** `keys` state changes of one projection of `tenantId`, turned into pending deliveries at time 1000. */
      const deliveries = async (tenantId: string, keys: number) => {
        await tenant(store, tenantId);
        await store.events.appendMany(Array.from({ length: keys }, (_, i) => req(tenantId, `order-${i}`)));
        const version = { versionId: 'v1', projectionId: 'p1', tenantId, className: 'C', targetPosition: 0, createdAt: 1 };
        await store.projections.deploy({ tenantId, projectionId: 'p1', name: 'n', version, ...notify });
        await store.lanes.inbox.route(
          { tenantId, versionId: 'v1' },
          Array.from({ length: keys }, (_, i) => ({ key: `k${i}`, position: i + 1 })),
          keys,
        );
        for (let i = 0; i < keys; i++) {
          await store.lanes.runs.laneWork({ tenantId, versionId: 'v1', key: `k${i}` }, 1);
          const change = { position: i + 1, aggregateId: `order-${i}`, aggregateType: 'order', version: 1, timestamp: 1, state: '{}' };
          await store.lanes.runs.applied(
            { tenantId, versionId: 'v1', key: `k${i}` },
            {
              state: '{}',
              fromPosition: 0,
              appliedPosition: i + 1,
              updatedAt: 1,
              notify: { projectionId: 'p1', changes: [change] },
            },
          );
        }
        expect(await store.webhooks.enqueue(tenantId, 'p1', 100, 1000)).toBe(keys);
      };
      await deliveries('ta', 30);
      await deliveries('tb', 1);
      await deliveries('tc', 2);
      expect(await store.webhooks.tenantsWithDue(1000, '', 10)).toEqual(['ta', 'tb', 'tc']);
      expect(await store.webhooks.tenantsWithDue(999, '', 10)).toEqual([]); // none due yet
      // After the tenant served last, wrapping round; never more than asked.
      expect(await store.webhooks.tenantsWithDue(1000, 'ta', 10)).toEqual(['tb', 'tc', 'ta']);
      expect(await store.webhooks.tenantsWithDue(1000, 'tb', 2)).toEqual(['tc', 'ta']);
      expect(await store.webhooks.tenantsWithDue(1000, 'tc', 10)).toEqual(['ta', 'tb', 'tc']);
      // Each tenant's share, oldest first; a big backlog gives no more than the share.
      const due = await store.webhooks.dueOfTenants(['tc', 'ta', 'tb'], 1000, 4);
      const count = (t: string) => due.filter((d) => d.tenantId === t).length;
      expect([count('ta'), count('tb'), count('tc')]).toEqual([4, 1, 2]);
      expect(due.filter((d) => d.tenantId === 'ta').map((d) => d.sequence)).toEqual([1, 2, 3, 4]);
      expect(await store.webhooks.dueOfTenants([], 1000, 4)).toEqual([]);
      // A tenant whose deliveries all wait for a retry is not named.
      for (const d of await store.webhooks.dueOfTenants(['tb'], 1000, 10)) await store.webhooks.attemptFailed(d, 'HTTP 500', 5000, 1000);
      expect(await store.webhooks.tenantsWithDue(1000, '', 10)).toEqual(['ta', 'tc']);
      expect(await store.webhooks.tenantsWithDue(5000, 'tc', 10)).toEqual(['ta', 'tb', 'tc']);
    });

    if (harness.concurrentInstances) {
      it('never lets a reader pass a transaction that is still open', async () => {
        const t = await tenant(store, 't1');
        await store.events.appendMany([req(t, 'seed-1')]);
        const { slow, fast, inside, release } = await heldCommit(harness, store, extra);

        const held = slow.events.appendMany([req(t, 'slow-1')]);
        await inside; // position 2 is drawn and the transaction is open
        const later = fast.events.appendMany([req(t, 'fast-1')]);
        const otherTenant = await tenant(store, 't2');
        // Another tenant is not blocked by t1's open transaction.
        const [o2] = await fast.events.appendMany([req(otherTenant, 'free-1')]);
        expect(o2.ok).toBe(true);

        await elapse(300, 'time for a reader to see past an uncommitted position, which it must not');
        // The reader sees nothing past position 1 while position 2 is uncommitted, even though a later append waits.
        expect((await store.events.readAll(t, 0, 100)).map((e) => e.position)).toEqual([1]);
        expect((await store.events.readLog(t, { direction: 'forward', afterPosition: 0, limit: 100 })).map((e) => e.position)).toEqual([1]);
        expect((await store.events.readLog(t, { direction: 'backward', limit: 100 })).map((e) => e.position)).toEqual([1]);
        release();
        const [h] = await held;
        const [l] = await later;
        expect(h.ok && h.result.events[0].position).toBe(2);
        expect(l.ok && l.result.events[0].position).toBe(3);
        expect((await store.events.readAll(t, 1, 100)).map((e) => [e.position, e.aggregateId])).toEqual([
          [2, 'slow-1'],
          [3, 'fast-1'],
        ]);
      });

      it('shows a reader of the log only gap-free prefixes while several instances append', async () => {
        const t = await tenant(store, 't1');
        const writers = [store, await harness.sameStorage(store), await harness.sameStorage(store)];
        const reader = await harness.sameStorage(store);
        extra.push(...writers.slice(1), reader);
        let done = false;
        const appends = Promise.all(
          writers.map(async (w, k) => {
            for (let i = 0; i < 40; i++) await w.events.appendMany([req(t, `w${k}-${i % 3}`), req(t, `v${k}-${i % 5}`)]);
          }),
        ).finally(() => (done = true));
        let reads = 0;
        while (!done || reads === 0) {
          const got = (await reader.events.readLog(t, { direction: 'forward', afterPosition: 0, limit: 1000 })).map((e) => e.position);
          expect(got).toEqual(Array.from({ length: got.length }, (_, i) => i + 1));
          reads++;
        }
        await appends;
        expect((await reader.events.readLog(t, { direction: 'backward', limit: 1000 })).length).toBe(240);
      });

      it('decides on the stored version, not what one instance last saw, after another instance wrote', async () => {
        const t = await tenant(store, 't1');
        const other = await harness.sameStorage(store);
        extra.push(other);
        await store.events.appendMany([req(t, 'shared-1')]); // this instance now believes version 1
        await other.events.appendMany([req(t, 'shared-1')]); // the store is at version 2
        const [stale] = await store.events.appendMany([req(t, 'shared-1', { expectedVersion: 1 })]);
        expect(!stale.ok && stale.error.details).toEqual({ expectedVersion: 1, actualVersion: 2 });
        await other.events.appendMany([req(t, 'shared-1')]); // version 3
        const [ok] = await store.events.appendMany([req(t, 'shared-1', { expectedVersion: 3 })]);
        expect(ok.ok && ok.result.events[0].version).toBe(4);
        const [plain] = await store.events.appendMany([req(t, 'shared-1')]);
        expect(plain.ok && plain.result.events[0]).toMatchObject({ version: 5, position: 5 });
      });

      it('leaves no hole in positions when a transaction rolls back', async () => {
        const t = await tenant(store, 't1');
        const failing = await harness.sameStorage(store, {
          beforeCommit: async () => {
            throw new Error('boom');
          },
        });
        extra.push(failing);
        await expect(failing.events.appendMany([req(t, 'gone-1')])).rejects.toThrow('boom');
        const [o] = await store.events.appendMany([req(t, 'kept-1')]);
        expect(o.ok && o.result.events[0].position).toBe(1);
        expect(await store.events.streamInfo(t, 'gone-1')).toBeNull();
      });
    }
  });
}
