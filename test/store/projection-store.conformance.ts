import { LaneWorld } from '../support/memory-lane-world';
import { req, tenant } from './store-fixtures';

/**
 * The projection catalog (store.projections) and the lane roles (store.lanes), against the real
 * engine: part of testEventStore, run inside its describe on the store its beforeEach opened; and
 * against the in-memory lane roles with the catalog they read (memory-lanes.int-spec.ts).
 */
export function describeProjectionStore(current: () => LaneWorld): void {
  let store: LaneWorld;
  beforeEach(() => {
    store = current();
  });

  describe('projection catalog with its lanes', () => {
    it('keeps projection lanes: inbox order, checkpoint, holds, and redeploys', async () => {
      const t = await tenant(store, 't1');
      await store.events.appendMany([1, 2, 3, 4].map((i) => req(t, `order-${i}`)));
      const v1 = { versionId: 'v1', projectionId: 'p1', tenantId: t, className: 'C', targetPosition: 4, createdAt: 1 };
      const p = await store.projections.deploy({ tenantId: t, projectionId: 'p1', name: 'totals', version: v1 });
      expect(p).toMatchObject({ projectionId: 'p1', activeVersion: 'v1', pendingVersion: null });
      await store.lanes.inbox.route(
        { tenantId: t, versionId: 'v1' },
        [
          { key: 'a', position: 1 },
          { key: 'b', position: 2 },
          { key: 'a', position: 3 },
        ],
        3,
      );
      await store.lanes.inbox.route({ tenantId: t, versionId: 'v1' }, [{ key: 'a', position: 3 }], 2); // duplicate and older: ignored
      expect((await store.projections.getVersion(t, 'v1'))?.routedPosition).toBe(3);
      const work = (await store.lanes.runs.laneWork({ tenantId: t, versionId: 'v1', key: 'a' }, 10))!;
      expect(work.lane).toMatchObject({ key: 'a', state: null, appliedPosition: 0 });
      expect(work.events.map((e) => e.position)).toEqual([1, 3]);
      expect(await store.lanes.sweep.hasUnappliedUpTo({ tenantId: t, versionId: 'v1' }, 4)).toBe(true);
      expect(await store.lanes.reads.oldestUnapplied({ tenantId: t, versionId: 'v1' })).toBe(1);
      expect(
        await store.lanes.runs.applied(
          { tenantId: t, versionId: 'v1', key: 'a' },
          { state: '{"n":2}', fromPosition: 0, appliedPosition: 3, updatedAt: 9 },
        ),
      ).toBe(true);
      // Another run of the lane read the same checkpoint (0): whatever it applied, it keeps nothing, neither a
      // checkpoint going back nor one going further with a state that lacks the events the first run consumed.
      expect(
        await store.lanes.runs.applied(
          { tenantId: t, versionId: 'v1', key: 'a' },
          { state: '{"n":1}', fromPosition: 0, appliedPosition: 1, updatedAt: 9 },
        ),
      ).toBe(false);
      expect(
        await store.lanes.runs.applied(
          { tenantId: t, versionId: 'v1', key: 'a' },
          { state: '{"n":1}', fromPosition: 0, appliedPosition: 4, updatedAt: 9 },
        ),
      ).toBe(false);
      expect(await store.lanes.reads.getLane({ tenantId: t, versionId: 'v1', key: 'a' })).toMatchObject({
        state: '{"n":2}',
        appliedPosition: 3,
      });
      expect((await store.lanes.runs.laneWork({ tenantId: t, versionId: 'v1', key: 'a' }, 10))!.events).toEqual([]);

      // Lane b fails: counted, then held on its event; only b is held.
      await store.lanes.runs.laneWork({ tenantId: t, versionId: 'v1', key: 'b' }, 10);
      expect(
        await store.lanes.runs.failed({ tenantId: t, versionId: 'v1', key: 'b' }, { position: 2, error: 'boom', holdAfterAttempts: 3 }),
      ).toBe(1);
      expect((await store.lanes.reads.getLane({ tenantId: t, versionId: 'v1', key: 'b' }))?.heldPosition).toBeNull();
      // The failure's details are kept with the hold (held_failure), as given.
      const failure = JSON.stringify({
        exceptionType: 'System.InvalidOperationException',
        frames: [{ method: 'M', file: 'A.cs', line: 3 }],
      });
      expect(
        await store.lanes.runs.failed({ tenantId: t, versionId: 'v1', key: 'b' }, { position: 2, error: 'boom', hold: true, failure }),
      ).toBe(2);
      expect(await store.lanes.reads.getLane({ tenantId: t, versionId: 'v1', key: 'b' })).toMatchObject({
        heldPosition: 2,
        heldError: 'boom',
        heldFailure: failure,
      });
      expect(await store.lanes.sweep.hasUnappliedUpTo({ tenantId: t, versionId: 'v1' }, 4)).toBe(false); // held lanes do not count
      expect(await store.lanes.sweep.lanesWithWork({ tenantId: t, versionId: 'v1' }, 10)).toEqual([]);
      expect(await store.lanes.reads.lag({ tenantId: t, versionId: 'v1' })).toEqual({
        inboxDepth: 1,
        heldLanes: 1,
        laneCount: 2,
        oldestUnapplied: 2,
      });
      expect(await store.lanes.reads.oldestUnapplied({ tenantId: t, versionId: 'v1' })).toBe(2); // the held lane's row: what lag() says, without its counts
      expect(
        (await store.lanes.reads.listLanes({ tenantId: t, versionId: 'v1' }, { afterKey: '', limit: 10, heldOnly: true })).map(
          (l) => l.key,
        ),
      ).toEqual(['b']);
      expect(await store.lanes.holds.skip({ tenantId: t, versionId: 'v1', key: 'b' })).toBe(true);
      expect(await store.lanes.reads.getLane({ tenantId: t, versionId: 'v1', key: 'b' })).toMatchObject({
        heldPosition: null,
        heldFailure: null, // the hold's details go with it
        appliedPosition: 2,
        attempts: 0,
      });
      expect((await store.lanes.reads.lag({ tenantId: t, versionId: 'v1' })).inboxDepth).toBe(0);
      expect(await store.lanes.reads.oldestUnapplied({ tenantId: t, versionId: 'v1' })).toBeNull();

      // Redeploy: the new version is pending beside the active one, then promoted atomically.
      const p2 = await store.projections.deploy({
        tenantId: t,
        projectionId: 'ignored',
        name: 'totals',
        version: { ...v1, versionId: 'v2' },
      });
      expect(p2).toMatchObject({ projectionId: 'p1', activeVersion: 'v1', pendingVersion: 'v2' });
      expect((await store.projections.liveVersions()).map((v) => v.versionId).sort()).toEqual(['v1', 'v2']);
      expect(await store.projections.promote(t, 'p1', 'v2')).toBe('v1');
      expect(await store.projections.get(t, 'p1')).toMatchObject({ activeVersion: 'v2', pendingVersion: null });
      // The promotion dropped v1 in its own transaction: no row, a tombstone; its lanes until the purge.
      expect(await store.projections.getVersion(t, 'v1')).toBeNull();
      expect((await store.lanes.sweep.sweepCandidates()).dropped.map((d) => d.versionId)).toEqual(['v1']);
      expect((await store.lanes.sweep.orphanRows()).versions).toEqual([{ tenantId: t, versionId: 'v1' }]);
      await store.lanes.sweep.dropVersion({ tenantId: t, versionId: 'v1' });
      expect(await store.lanes.reads.getLane({ tenantId: t, versionId: 'v1', key: 'a' })).toBeNull();
      expect(await store.lanes.sweep.orphanRows()).toEqual({ lanes: 0, inboxRows: 0, versions: [] });
      expect(await store.projections.get('other', 'p1')).toBeNull();
      expect(await store.projections.delete('other', 'p1')).toBeNull();
      expect(await store.projections.delete(t, 'p1')).toEqual(['v2']);
      expect(await store.projections.list(t)).toEqual([]);
      expect(await store.projections.delete(t, 'p1')).toBeNull();
    });

    it('refuses every write of a dropped version: no router, lane run or lease makes a row for it again', async () => {
      const t = await tenant(store, 't1');
      await store.events.appendMany([1, 2, 3, 4].map((i) => req(t, `order-${i}`)));
      const version = (versionId: string) => ({
        versionId,
        projectionId: 'p1',
        tenantId: t,
        className: 'C',
        targetPosition: 4,
        createdAt: 1,
      });
      await store.projections.deploy({ tenantId: t, projectionId: 'p1', name: 'n', version: version('v1') });
      expect(await store.lanes.inbox.route({ tenantId: t, versionId: 'v1' }, [{ key: 'a', position: 1 }], 1)).toBe(true);
      const work = (await store.lanes.runs.laneWork({ tenantId: t, versionId: 'v1', key: 'a' }, 10))!;
      // A redeploy, replaced by another before it caught up: the replaced one is dropped by the deploy.
      await store.projections.deploy({ tenantId: t, projectionId: 'p1', name: 'n', version: version('v2') });
      expect(await store.lanes.inbox.route({ tenantId: t, versionId: 'v2' }, [{ key: 'b', position: 2 }], 2)).toBe(true);
      await store.projections.deploy({ tenantId: t, projectionId: 'p1', name: 'n', version: version('v3') });
      expect(await store.projections.get(t, 'p1')).toMatchObject({ activeVersion: 'v1', pendingVersion: 'v3' });
      expect(await store.projections.getVersion(t, 'v2')).toBeNull();
      expect(await store.lanes.inbox.route({ tenantId: t, versionId: 'v2' }, [{ key: 'c', position: 3 }], 3)).toBe(false);
      expect(await store.lanes.runs.laneWork({ tenantId: t, versionId: 'v2', key: 'c' }, 10)).toBeNull();
      expect(await store.lanes.reads.getLane({ tenantId: t, versionId: 'v2', key: 'c' })).toBeNull();

      // The projection deleted while v1's lane run is under way: written first, whole.
      expect((await store.projections.delete(t, 'p1'))!.sort()).toEqual(['v1', 'v3']);
      expect(await store.projections.getVersion(t, 'v1')).toBeNull();
      expect(await store.lanes.inbox.route({ tenantId: t, versionId: 'v1' }, [{ key: 'a', position: 4 }], 4)).toBe(false);
      expect(
        await store.lanes.runs.applied(
          { tenantId: t, versionId: 'v1', key: 'a' },
          { state: '{}', fromPosition: work.lane.appliedPosition, appliedPosition: 1, updatedAt: 1 },
        ),
      ).toBe(false);
      expect(await store.lanes.runs.laneWork({ tenantId: t, versionId: 'v1', key: 'a' }, 10)).toBeNull();
      expect(await store.lanes.runs.laneWork({ tenantId: t, versionId: 'v1', key: 'new' }, 10)).toBeNull();
      expect(await store.lanes.runs.acquireLease({ tenantId: t, versionId: 'v1', key: 'new' }, 'me', 1, 2)).toBe(false);
      expect(await store.lanes.reads.getLane({ tenantId: t, versionId: 'v1', key: 'new' })).toBeNull();
      const { live, dropped } = await store.lanes.sweep.sweepCandidates();
      expect(live).toEqual([]);
      expect(dropped.map((d) => d.versionId).sort()).toEqual(['v1', 'v2', 'v3']);
      // What the rows routed before the drop left: lanes and inbox of dead versions, until the purge.
      expect((await store.lanes.sweep.orphanRows()).versions.map((v) => v.versionId).sort()).toEqual(['v1', 'v2']);
      for (const d of dropped) await store.lanes.sweep.dropVersion({ tenantId: t, versionId: d.versionId });
      expect(await store.lanes.sweep.orphanRows()).toEqual({ lanes: 0, inboxRows: 0, versions: [] });
      await store.projections.forgetDropped(t, 'v1');
      expect((await store.lanes.sweep.sweepCandidates()).dropped.map((d) => d.versionId).sort()).toEqual(['v2', 'v3']);

      // A deleted name deploys afresh.
      await store.projections.deploy({ tenantId: t, projectionId: 'p2', name: 'm', version: { ...version('v4'), projectionId: 'p2' } });
      await store.projections.delete(t, 'p2');
      const again = await store.projections.deploy({
        tenantId: t,
        projectionId: 'p2',
        name: 'm',
        version: { ...version('v5'), projectionId: 'p2' },
      });
      expect(again).toMatchObject({ activeVersion: 'v5', pendingVersion: null });
    });
  });

  describe('lane store', () => {
    it('routes several versions of a tenant in one call, refusing only a dropped one', async () => {
      const t = await tenant(store, 't1');
      await store.events.appendMany([1, 2, 3].map((i) => req(t, `order-${i}`)));
      const version = (versionId: string, projectionId: string) => ({
        versionId,
        projectionId,
        tenantId: t,
        className: 'C',
        targetPosition: 3,
        createdAt: 1,
      });
      for (const [v, p] of [
        ['va', 'pa'],
        ['vb', 'pb'],
        ['vc', 'pc'],
      ])
        await store.projections.deploy({ tenantId: t, projectionId: p, name: p, version: version(v, p) });
      expect((await store.projections.versionsOf(t, ['va', 'vb', 'nope'])).map((v) => v.versionId).sort()).toEqual(['va', 'vb']);
      expect(await store.projections.versionsOf('other', ['va'])).toEqual([]);
      // All live: one transaction.
      expect(
        await store.lanes.inbox.routeMany(t, [
          { versionId: 'va', items: [{ key: 'a', position: 1 }], routedPosition: 1 },
          { versionId: 'vb', items: [{ key: 'b', position: 1 }], routedPosition: 1 },
        ]),
      ).toEqual([]);
      // vb deleted meanwhile: refused alone, va and vc written.
      await store.projections.delete(t, 'pb');
      expect(
        await store.lanes.inbox.routeMany(t, [
          { versionId: 'va', items: [{ key: 'a', position: 2 }], routedPosition: 3 },
          { versionId: 'vb', items: [{ key: 'b', position: 2 }], routedPosition: 3 },
          { versionId: 'vc', items: [{ key: 'c', position: 3 }], routedPosition: 3 },
        ]),
      ).toEqual(['vb']);
      const positions = new Map((await store.projections.versionsOf(t, ['va', 'vb', 'vc'])).map((v) => [v.versionId, v.routedPosition]));
      expect(Object.fromEntries(positions)).toEqual({ va: 3, vc: 3 });
      expect((await store.lanes.runs.laneWork({ tenantId: t, versionId: 'va', key: 'a' }, 10))!.events.map((e) => e.position)).toEqual([
        1, 2,
      ]);
      expect((await store.lanes.runs.laneWork({ tenantId: t, versionId: 'vc', key: 'c' }, 10))!.events.map((e) => e.position)).toEqual([3]);
      expect(await store.lanes.runs.laneWork({ tenantId: t, versionId: 'vb', key: 'b' }, 10)).toBeNull();
    });

    it('names to the sweep only the versions with work: behind the head, an inbox, or not caught up', async () => {
      const busy = await tenant(store, 't1');
      const idle = await tenant(store, 't2');
      await store.events.appendMany([req(busy, 'order-1'), req(busy, 'order-2'), req(idle, 'order-1')]);
      const version = (tenantId: string, versionId: string, projectionId: string) => ({
        versionId,
        projectionId,
        tenantId,
        className: 'C',
        targetPosition: 0,
        createdAt: 1,
      });
      await store.projections.deploy({ tenantId: busy, projectionId: 'p1', name: 'busy', version: version(busy, 'v1', 'p1') });
      await store.projections.deploy({ tenantId: idle, projectionId: 'p2', name: 'idle', version: version(idle, 'v2', 'p2') });
      const named = async () =>
        (await store.lanes.sweep.sweepCandidates()).live.map((c) => ({
          v: c.version.versionId,
          tenant: c.version.tenantId,
          behindHead: c.behindHead,
          hasInbox: c.hasInbox,
        }));
      expect((await named()).sort((a, b) => a.v.localeCompare(b.v))).toEqual([
        { v: 'v1', tenant: busy, behindHead: true, hasInbox: false },
        { v: 'v2', tenant: idle, behindHead: true, hasInbox: false },
      ]);
      await store.lanes.inbox.route({ tenantId: idle, versionId: 'v2' }, [], 1);
      await store.projections.markCaughtUp(idle, 'v2', 5);
      await store.projections.markCaughtUp(busy, 'v1', 5);
      expect(await named()).toEqual([{ v: 'v1', tenant: busy, behindHead: true, hasInbox: false }]);
      await store.lanes.inbox.route({ tenantId: busy, versionId: 'v1' }, [{ key: 'a', position: 1 }], 2);
      expect(await named()).toEqual([{ v: 'v1', tenant: busy, behindHead: false, hasInbox: true }]);
      await store.lanes.runs.laneWork({ tenantId: busy, versionId: 'v1', key: 'a' }, 10);
      await store.lanes.runs.applied(
        { tenantId: busy, versionId: 'v1', key: 'a' },
        { state: '{}', fromPosition: 0, appliedPosition: 1, updatedAt: 1 },
      );
      expect(await named()).toEqual([]);
      // A redeploy not caught up yet is named even with nothing to route; the retired version never is.
      await store.projections.deploy({
        tenantId: idle,
        projectionId: 'p2',
        name: 'idle',
        version: { ...version(idle, 'v3', 'p2'), targetPosition: 1 },
      });
      await store.lanes.inbox.route({ tenantId: idle, versionId: 'v3' }, [], 1);
      expect(await named()).toEqual([{ v: 'v3', tenant: idle, behindHead: false, hasInbox: false }]);
      await store.projections.promote(idle, 'p2', 'v3');
      await store.projections.markCaughtUp(idle, 'v3', 6);
      await store.events.appendMany([req(idle, 'order-2')]);
      expect(await named()).toEqual([{ v: 'v3', tenant: idle, behindHead: true, hasInbox: false }]);
    });

    it('gives the metrics scrape every live version with its lag, lanes and notification head in one call', async () => {
      const t = await tenant(store, 't1');
      const quiet = await tenant(store, 't2');
      await store.events.appendMany([1, 2, 3, 4].map((i) => req(t, `order-${i}`)));
      await store.events.appendMany([req(quiet, 'order-1')]);
      const events = await store.events.readAll(t, 0, 10);
      const v = (tenantId: string, versionId: string, projectionId: string) => ({
        versionId,
        projectionId,
        tenantId,
        className: 'C',
        targetPosition: 0,
        createdAt: 1,
      });
      await store.projections.deploy({ tenantId: t, projectionId: 'p1', name: 'totals', version: v(t, 'v1', 'p1') });
      await store.projections.deploy({ tenantId: quiet, projectionId: 'q1', name: 'quiet', version: v(quiet, 'vq', 'q1') });
      await store.lanes.inbox.route(
        { tenantId: t, versionId: 'v1' },
        [
          { key: 'a', position: 1 },
          { key: 'b', position: 2 },
          { key: 'a', position: 3 },
        ],
        3,
      );
      await store.lanes.runs.laneWork({ tenantId: t, versionId: 'v1', key: 'a' }, 1);
      const e1 = events[0];
      await store.lanes.runs.applied(
        { tenantId: t, versionId: 'v1', key: 'a' },
        {
          state: '{"n":1}',
          fromPosition: 0,
          appliedPosition: 1,
          updatedAt: e1.timestamp,
          notify: {
            projectionId: 'p1',
            changes: [
              {
                position: 1,
                aggregateId: e1.aggregateId,
                aggregateType: e1.aggregateType,
                version: 1,
                timestamp: e1.timestamp,
                state: '{"n":1}',
              },
            ],
          },
        },
      );
      await store.lanes.runs.laneWork({ tenantId: t, versionId: 'v1', key: 'b' }, 10);
      await store.lanes.runs.failed({ tenantId: t, versionId: 'v1', key: 'b' }, { position: 2, error: 'boom', hold: true });
      // A redeploy waits beside the active version, nothing routed yet.
      await store.projections.deploy({ tenantId: t, projectionId: 'p1', name: 'totals', version: v(t, 'v2', 'p1') });

      const gauges = await store.lanes.gauges.versionGauges();
      expect(gauges.find((g) => g.tenantId === quiet)).toMatchObject({
        versionId: 'vq',
        role: 'active',
        headPosition: 1,
        appliedPosition: 0,
        notificationHead: 0,
      });
      expect(gauges.filter((g) => g.tenantId === t)).toEqual([
        {
          tenantId: t,
          projectionId: 'p1',
          versionId: 'v1',
          role: 'active',
          headPosition: 4,
          routedPosition: 3,
          appliedPosition: 1, // b holds position 2
          inboxRows: 2,
          heldLanes: 1,
          laneCount: 2,
          oldestUnappliedAt: events[1].timestamp,
          notificationHead: 1,
        },
        {
          tenantId: t,
          projectionId: 'p1',
          versionId: 'v2',
          role: 'pending',
          headPosition: 4,
          routedPosition: 0,
          appliedPosition: 0,
          inboxRows: 0,
          heldLanes: 0,
          laneCount: 0,
          oldestUnappliedAt: events[0].timestamp,
          notificationHead: 1,
        },
      ]);
      // Caught up: nothing unapplied, no age.
      await store.lanes.inbox.route({ tenantId: quiet, versionId: 'vq' }, [], 1);
      const caughtUp = (await store.lanes.gauges.versionGauges()).find((g) => g.versionId === 'vq')!;
      expect(caughtUp).toMatchObject({ appliedPosition: 1, oldestUnappliedAt: null, inboxRows: 0 });
      // A dropped version is not reported.
      await store.projections.delete(t, 'p1');
      expect((await store.lanes.gauges.versionGauges()).map((g) => g.versionId)).toEqual(['vq']);
    });

    it('leases a lane to one instance at a time', async () => {
      const t = await tenant(store, 't1');
      await store.projections.deploy({
        tenantId: t,
        projectionId: 'p1',
        name: 'n',
        version: { versionId: 'v1', projectionId: 'p1', tenantId: t, className: 'C', targetPosition: 0, createdAt: 1 },
      });
      const lease = (owner: string, now: number) =>
        store.lanes.runs.acquireLease({ tenantId: t, versionId: 'v1', key: 'k' }, owner, now, now + 1000);
      expect(await lease('a', 0)).toBe(true);
      expect(await lease('b', 500)).toBe(false);
      expect(await lease('a', 600)).toBe(true); // the holder renews
      expect(await lease('b', 1700)).toBe(true); // expired: taken over
      await store.lanes.runs.releaseLease({ tenantId: t, versionId: 'v1', key: 'k' }, 'a'); // not a's any more: no effect
      expect(await lease('a', 1800)).toBe(false);
      await store.lanes.runs.releaseLease({ tenantId: t, versionId: 'v1', key: 'k' }, 'b');
      expect(await lease('a', 1900)).toBe(true);
    });

    it('renews a lease only for its holder, and keeps a run’s write only while its instance holds the lease', async () => {
      const t = await tenant(store, 't1');
      await store.projections.deploy({
        tenantId: t,
        projectionId: 'p1',
        name: 'n',
        version: { versionId: 'v1', projectionId: 'p1', tenantId: t, className: 'C', targetPosition: 0, createdAt: 1 },
      });
      const lease = (owner: string, now: number) =>
        store.lanes.runs.acquireLease({ tenantId: t, versionId: 'v1', key: 'k' }, owner, now, now + 1000);
      expect(await lease('a', 0)).toBe(true);
      expect(await store.lanes.runs.renewLease({ tenantId: t, versionId: 'v1', key: 'k' }, 'a', 2000)).toBe(true);
      expect(await lease('b', 1500)).toBe(false); // renewed: still a's
      expect(await store.lanes.runs.renewLease({ tenantId: t, versionId: 'v1', key: 'k' }, 'b', 3000)).toBe(false);
      // a pauses past its lease; b takes the lane over and stores first.
      expect(await lease('b', 2500)).toBe(true);
      expect(await store.lanes.runs.renewLease({ tenantId: t, versionId: 'v1', key: 'k' }, 'a', 4000)).toBe(false);
      const change = (leaseOwner: string, state: string) => ({ state, fromPosition: 0, appliedPosition: 1, updatedAt: 9, leaseOwner });
      // a's late write is refused by the lease alone (the checkpoint has not moved yet): nothing is kept.
      expect(await store.lanes.runs.applied({ tenantId: t, versionId: 'v1', key: 'k' }, change('a', '{"by":"a"}'))).toBe(false);
      expect(await store.lanes.runs.applied({ tenantId: t, versionId: 'v1', key: 'k' }, change('b', '{"by":"b"}'))).toBe(true);
      expect(await store.lanes.reads.getLane({ tenantId: t, versionId: 'v1', key: 'k' })).toMatchObject({
        state: '{"by":"b"}',
        appliedPosition: 1,
      });
      // Released, the lease still fences: only the last holder's runs store until another takes it.
      await store.lanes.runs.releaseLease({ tenantId: t, versionId: 'v1', key: 'k' }, 'b');
      expect(await store.lanes.runs.renewLease({ tenantId: t, versionId: 'v1', key: 'k' }, 'b', 5000)).toBe(false);
    });
  });
}
