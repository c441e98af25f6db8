import { DomainError } from '../../src/common/domain-error';
import { toStoredSettings } from '../../src/notifications/log/notification-settings';
import { Store } from '../../src/store/store.port';
import type { StoreHarness } from './store-fixtures';
import { rawAll, req, tenant } from './store-fixtures';

const codeOf = async (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'ok',
    (e) => (e instanceof DomainError ? e.code : String(e)),
  );

/** DELETE /events/{aggregateId} in the store (erasure.port.ts), on every adapter. */
export function describeErasureStore(current: () => Store, harness: StoreHarness, extra: Store[]): void {
  describe('erasure', () => {
    it('keeps tombstones in place, freezes the stream, writes $erased at the head, and answers a repeat the same', async () => {
      const store = current();
      const t = await tenant(store, 't1');
      await store.events.appendMany([
        req(t, 'cust-1', {
          metadata: '{"ip":"10.0.0.1"}',
          correlationId: 'c-1',
          events: [{ eventType: 'Registered', data: '{"name":"Ann"}' }],
        }),
        req(t, 'other-1'),
        req(t, 'cust-1', { events: [{ eventType: 'Moved', data: '{"city":"Oslo"}' }] }),
      ]);
      const before = await store.events.readStream(t, 'cust-1', 1, 10);
      const r = await store.erasure.erase(t, 'cust-1');
      expect(r).toMatchObject({ aggregateId: 'cust-1', aggregateType: 'cust', version: 2, alreadyErased: false });
      expect(r.erasedEvent).toMatchObject({
        position: 4,
        aggregateId: '$erasures',
        aggregateType: '$system',
        eventType: '$erased',
        version: 1,
      });
      expect(JSON.parse(r.erasedEvent.data)).toEqual({ aggregateId: 'cust-1', aggregateType: 'cust' });

      const after = await store.events.readStream(t, 'cust-1', 1, 10);
      expect(after.map((e) => [e.eventId, e.version, e.position, e.eventType, e.timestamp, e.correlationId])).toEqual(
        before.map((e) => [e.eventId, e.version, e.position, e.eventType, e.timestamp, e.correlationId]),
      );
      expect(after.every((e) => e.data === '{}' && e.metadata === null && e.erasedAt === r.erasedAt)).toBe(true);
      const log = await store.events.readAll(t, 0, 100);
      expect(log.map((e) => e.position)).toEqual([1, 2, 3, 4]);
      expect(log[1]).not.toHaveProperty('erasedAt'); // other aggregates untouched
      expect(log[3]).toMatchObject({ eventId: r.erasedEvent.eventId, eventType: '$erased' });
      expect(await store.events.headPosition(t)).toBe(4);
      expect(await store.events.streamInfo(t, 'cust-1')).toEqual({ aggregateType: 'cust', version: 2, erasedAt: r.erasedAt });
      // No byte of the payloads is left in the events table.
      const raw = await rawAll<{ data: string; metadata: string | null }>(
        store,
        'SELECT data, metadata FROM events WHERE tenant_id = ? AND aggregate_id = ?',
        [t, 'cust-1'],
      );
      expect(raw).toEqual([
        { data: '{}', metadata: null },
        { data: '{}', metadata: null },
      ]);

      // Appends are refused, alone or in a group commit beside others, which still succeed.
      const out = await store.events.appendMany([req(t, 'cust-1'), req(t, 'other-1'), req(t, 'cust-1', { expectedVersion: 2 })]);
      expect(out.map((o) => (o.ok ? 'ok' : o.error.code))).toEqual(['AGGREGATE_ERASED', 'ok', 'AGGREGATE_ERASED']);
      expect(await store.events.streamInfo(t, 'cust-1')).toMatchObject({ version: 2 });

      const again = await store.erasure.erase(t, 'cust-1');
      expect(again).toEqual({ ...r, alreadyErased: true });
      expect(await store.events.headPosition(t)).toBe(5); // only other-1's append since
      expect(await codeOf(store.erasure.erase(t, 'nobody-1'))).toBe('NOT_FOUND');
      expect(await codeOf(store.erasure.erase(t, '$erasures'))).toBe('RESERVED_NAME');
      // Tenants' appends never reach the service's own stream, whatever id names it.
      const [sys] = await store.events.appendMany([req(t, '$erasures')]);
      expect(!sys.ok && sys.error.code).toBe('RESERVED_NAME');
      // Another tenant's aggregate of the same id is not this tenant's.
      const t2 = await tenant(store, 't2');
      expect(await codeOf(store.erasure.erase(t2, 'cust-1'))).toBe('NOT_FOUND');
      const second = await store.erasure.erase(t, 'other-1');
      expect(second.erasedEvent).toMatchObject({ position: 6, version: 2 }); // the tenant's one $erasures stream
    });

    it('clears the reducer state idempotency keys remembered for the aggregate, and only for it', async () => {
      const store = current();
      const t = await tenant(store, 't1');
      const outcome = JSON.stringify({ state: '{"name":"Ann"}' });
      const keyed = (aggregateId: string, key: string) =>
        req(t, aggregateId, { idempotency: { key, requestHash: `h-${key}`, notBefore: 0, outcome } });
      await store.events.appendMany([keyed('cust-1', 'k1')]);
      await store.events.appendMany([keyed('other-1', 'k2')]);
      await store.events.appendMany([keyed('cust-1', 'k3')]);
      await store.erasure.erase(t, 'cust-1');
      const rows = await rawAll<{ idem_key: string; outcome: string | null }>(
        store,
        'SELECT idem_key, outcome FROM idempotency_keys WHERE tenant_id = ? ORDER BY idem_key',
        [t],
      );
      expect(rows.map((r) => [r.idem_key, r.outcome])).toEqual([
        ['k1', null],
        ['k2', outcome],
        ['k3', null],
      ]);
      // A retry still answers the first append's events (now tombstones), without the erased state.
      const [replay] = await store.events.appendMany([keyed('cust-1', 'k1')]);
      expect(replay.ok && replay.result.replay).toEqual({ outcome: null });
    });

    it('removes the snapshot, keeps catch-up from writing one again, and rewrites the notifications the events caused', async () => {
      const store = current();
      const t = await tenant(store, 't1');
      const snapshot = (state: string) => ({ bindingId: 'b1', baseVersion: 0, state });
      await store.events.appendMany([
        req(t, 'cust-1', { snapshot: snapshot('{"name":"Ann"}') }),
        req(t, 'cust-2', { snapshot: snapshot('{"name":"Bo"}') }),
      ]);
      const v1 = { versionId: 'v1', projectionId: 'p1', tenantId: t, className: 'C', targetPosition: 0, createdAt: 1 };
      const notify = toStoredSettings({ webhookUrl: 'http://x.example/h', isolated: false, sse: true });
      await store.projections.deploy({ tenantId: t, projectionId: 'p1', name: 'dir', version: v1, ...notify });
      await store.lanes.inbox.route(
        { tenantId: t, versionId: 'v1' },
        [
          { key: 'k', position: 1 },
          { key: 'k', position: 2 },
        ],
        2,
      );
      await store.lanes.runs.laneWork({ tenantId: t, versionId: 'v1', key: 'k' }, 10);
      const change = (position: number, state: string) => ({
        position,
        aggregateId: `cust-${position}`,
        aggregateType: 'cust',
        version: 1,
        timestamp: 1,
        state,
      });
      // Two notifications share one state text with cust-2's: that text must stay for cust-2.
      expect(
        await store.lanes.runs.applied(
          { tenantId: t, versionId: 'v1', key: 'k' },
          {
            state: '{}',
            fromPosition: 0,
            appliedPosition: 1,
            updatedAt: 1,
            notify: { projectionId: 'p1', changes: [change(1, '{"secret":"Ann"}')] },
          },
        ),
      ).toBe(true);
      expect(await store.webhooks.enqueue(t, 'p1', 1000, 10_000)).toBe(1); // a pending delivery of it

      await store.erasure.erase(t, 'cust-1');
      expect(await store.snapshots.get(t, 'cust-1')).toBeNull();
      expect((await store.snapshots.get(t, 'cust-2'))?.state).toBe('{"name":"Bo"}');
      // A state computed before the erasure (catch-up, a read) is not written after it.
      await store.snapshots.putIfNewer(t, {
        aggregateId: 'cust-1',
        aggregateType: 'cust',
        bindingId: 'b2',
        version: 1,
        state: '{"name":"Ann"}',
        failedVersion: null,
        error: null,
        updatedAt: 1,
      });
      expect(await store.snapshots.get(t, 'cust-1')).toBeNull();
      expect((await store.snapshots.listAggregates(t, 'cust', '', 10)).map((a) => a.aggregateId)).toEqual(['cust-2']);

      const log = await store.notifications.read(t, 'p1', 0, 10);
      expect(log.map((n) => [n.aggregateId, n.state])).toEqual([['cust-1', '{}']]);
      // The pending delivery stays (its key's order holds) and reads the erased state when it is sent.
      expect(await rawAll(store, "SELECT sequence FROM webhook_deliveries WHERE tenant_id = ? AND status = 'pending'", [t])).toHaveLength(
        1,
      );
      const texts = await rawAll<{ state: string }>(store, 'SELECT state FROM notification_states WHERE tenant_id = ?', [t]);
      expect(texts.map((s) => s.state)).not.toContain('{"secret":"Ann"}');

      // A lane that read the event before the erasure and commits after it logs the erased state.
      expect(
        await store.lanes.runs.applied(
          { tenantId: t, versionId: 'v1', key: 'k' },
          {
            state: '{}',
            fromPosition: 1,
            appliedPosition: 2,
            updatedAt: 1,
            notify: { projectionId: 'p1', changes: [{ ...change(2, '{"late":"Bo"}'), aggregateId: 'cust-1' }] },
          },
        ),
      ).toBe(true);
      expect((await store.notifications.read(t, 'p1', 1, 10)).map((n) => n.state)).toEqual(['{}']);
    });

    it('lets an append racing the erasure from another connection either land before it (and be erased) or be refused', async () => {
      const store = current();
      const t = await tenant(store, 't1');
      const other = await harness.sameStorage(store);
      extra.push(other);
      for (let round = 0; round < 5; round++) {
        const id = `race-${round}`;
        // `other` caches the stream's version (PostgreSQL's optimistic path plans on it).
        await other.events.appendMany([req(t, id)]);
        const appends = Array.from({ length: 8 }, () => other.events.appendMany([req(t, id)]).then(([o]) => o));
        const erased = store.erasure.erase(t, id);
        const outcomes = await Promise.all(appends);
        const r = await erased;
        for (const o of outcomes) expect(o.ok || o.error.code === 'AGGREGATE_ERASED').toBe(true);
        const landed = outcomes.filter((o) => o.ok).length;
        // Exactly the appends that landed are in the stream, every one erased; none after the erasure.
        const events = await store.events.readStream(t, id, 1, 100);
        expect(events.map((e) => e.version)).toEqual(Array.from({ length: landed + 1 }, (_, i) => i + 1));
        expect(events.every((e) => e.erasedAt !== undefined && e.data === '{}')).toBe(true);
        expect(events.every((e) => e.position < r.erasedEvent.position)).toBe(true);
        expect(r.version).toBe(landed + 1);
        // And later appends from the instance that cached the old version are refused too.
        const [late] = await other.events.appendMany([req(t, id)]);
        expect(!late.ok && late.error.code).toBe('AGGREGATE_ERASED');
      }
    });
  });
}
