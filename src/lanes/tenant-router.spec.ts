import { RawJson } from '../common/raw-json';
import { EventLog } from '../store/event-log.port';
import { ProjectionVersion } from '../store/projection-catalog.port';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import { LaneRef, LaneScheduler } from './lane-scheduler.port';
import { holdWhole, TenantRouter } from './tenant-router';
import { LaneKeyCap } from './lane-key-cap';
import { elapse, until as untilMet } from '../../test/support/wait';

/**
 * One tenant's router with a real in-memory store and a scripted runtime (each event's key is in
 * its data; a version's ResolveKey can be held until the test lets it answer).
 */
describe('TenantRouter', () => {
  async function setup(eventCount: number, versionIds: string[], keysPerProjection = 0) {
    const store = new SqliteStore({ file: ':memory:' });
    await store.migrate();
    await store.tenants.createTenant({ tenantId: 't', name: 't', createdAt: 1 });
    const append = async (n: number) => {
      if (n > 0) {
        await store.events.appendMany(
          Array.from({ length: n }, (_, i) => ({
            tenantId: 't',
            aggregateId: `o-${i}`,
            inferredType: 'o',
            events: [{ eventType: 'E', data: `{"k":"k${i % 3}"}` }],
          })),
        );
      }
    };
    await append(eventCount);
    for (const [i, versionId] of versionIds.entries()) {
      const version = { tenantId: 't', versionId, projectionId: `p${i}`, className: 'C', targetPosition: 0, createdAt: 1 };
      await store.projections.deploy({ tenantId: 't', projectionId: `p${i}`, name: `n${i}`, version });
    }
    const reads: number[] = [];
    const log = {
      readAll: (tenantId: string, after: number, limit: number) => {
        reads.push(after);
        return store.events.readAll(tenantId, after, limit);
      },
    } as unknown as EventLog;
    /** Versions whose ResolveKey waits for `release`. */
    const held = new Set<string>();
    const waiting: (() => void)[] = [];
    const resolved: { versionId: string; eventIds: string[] }[] = [];
    const runtime = {
      resolveKeys: async (_t: string, versionId: string, _c: string, events: { eventId: string; data: RawJson }[]) => {
        if (held.has(versionId)) await new Promise<void>((r) => waiting.push(r));
        resolved.push({ versionId, eventIds: events.map((e) => e.eventId) });
        return events.map((e) => JSON.parse(e.data.text).k as string | string[] | null);
      },
    };
    const woken: LaneRef[] = [];
    const scheduler = { wakeMany: async (lanes: LaneRef[]) => void woken.push(...lanes) } as unknown as LaneScheduler;
    const gone: string[] = [];
    const keyCap = keysPerProjection ? new LaneKeyCap(store.lanes.inbox, { keysPerProjection: async () => keysPerProjection }) : undefined;
    const router = new TenantRouter(
      't',
      log,
      store.lanes,
      store.projections,
      runtime,
      scheduler,
      {
        routed: () => undefined,
        gone: (id) => void gone.push(id),
      },
      keyCap,
    );
    const version = async (id: string) => (await store.projections.getVersion('t', id)) as ProjectionVersion;
    const routed = async (id: string) => (await version(id)).routedPosition;
    const until = async (ok: () => boolean | Promise<boolean>) => {
      await untilMet(ok, Boolean, 5_000);
      expect(await ok()).toBe(true);
    };
    const release = () => waiting.shift()!();
    return { store, router, append, reads, held, waiting, release, resolved, woken, gone, version, routed, until };
  }

  it('reads the log once for the versions that stand at one position', async () => {
    const { store, router, append, reads, resolved, version, routed, until } = await setup(0, ['v1', 'v2']);
    router.add(await version('v1'));
    router.add(await version('v2'));
    await elapse(50, 'both versions find the log empty (nothing to observe: they route nothing)');
    reads.length = 0;
    resolved.length = 0;
    await append(20);
    router.wake();
    await until(async () => (await routed('v1')) === 20 && (await routed('v2')) === 20);
    expect(reads).toEqual([0]);
    const eventIds = (await store.events.readAll('t', 0, 100)).map((e) => e.eventId);
    expect(eventIds).toHaveLength(20);
    expect(resolved.sort((a, b) => a.versionId.localeCompare(b.versionId))).toEqual([
      { versionId: 'v1', eventIds },
      { versionId: 'v2', eventIds },
    ]);
    await router.stop();
    await store.close();
  });

  it('writes nothing for a version removed while its ResolveKey runs', async () => {
    const { store, router, held, waiting, release, woken, version, routed, until } = await setup(10, ['v1', 'v2']);
    held.add('v2');
    router.add(await version('v1'));
    router.add(await version('v2'));
    await until(() => waiting.length === 1); // v2's keys are being resolved
    let removed = false;
    const removing = router.remove('v2').then(() => (removed = true));
    await elapse(20, 'time for the remove to finish, which it must not while the pass is under way');
    expect(removed).toBe(false); // the remove waits for the pass under way
    release();
    await removing;
    expect(router.has('v2')).toBe(false);
    expect(await routed('v2')).toBe(0);
    expect(await store.lanes.sweep.lanesWithWork({ tenantId: 't', versionId: 'v2' }, 100)).toEqual([]);
    expect(woken.filter((l) => l.versionId === 'v2')).toEqual([]);
    await until(async () => (await routed('v1')) === 10);
    await router.stop();
    await store.close();
  });

  it('reports a version gone from the store and never routes it from 0', async () => {
    const { store, router, reads, resolved, gone, version, routed, until } = await setup(10, ['v1']);
    await store.lanes.inbox.route({ tenantId: 't', versionId: 'v1' }, [], 10); // v1 has routed everything
    router.add(await version('v1'));
    // Dropped elsewhere: this instance still holds the version as it was, at position 0.
    router.add({
      tenantId: 't',
      versionId: 'ghost',
      projectionId: 'px',
      className: 'C',
      targetPosition: 0,
      routedPosition: 0,
      caughtUpAt: null,
      createdAt: 1,
    });
    await until(() => gone.includes('ghost'));
    expect(router.has('ghost')).toBe(false);
    await elapse(50, 'time for a pass that would read the ghost from 0, which must not happen');
    expect(reads).not.toContain(0);
    expect(resolved.filter((r) => r.versionId === 'ghost')).toEqual([]);
    expect(gone).toEqual(['ghost']);
    expect(await routed('v1')).toBe(10);
    await router.stop();
    await store.close();
  });

  it('routes the caught-up versions between the batches of one catching up', async () => {
    const { store, router, append, held, waiting, release, version, routed, until } = await setup(1200, ['live', 'new']);
    await store.lanes.inbox.route({ tenantId: 't', versionId: 'live' }, [], 1200); // caught up at the head
    held.add('new'); // the new version's ResolveKey answers one batch at a time
    router.add(await version('live'));
    router.add(await version('new'));
    await until(() => waiting.length === 1); // the new version's first batch (1–500)
    await append(1); // position 1201
    router.wake();
    release();
    await until(async () => (await routed('new')) === 500 && waiting.length === 1); // its second batch
    release();
    await until(async () => (await routed('live')) === 1201);
    // The live version has its event while the new one is two batches into its catch-up.
    expect(await routed('new')).toBe(1000);
    expect(waiting).toHaveLength(1);
    held.clear();
    release();
    await until(async () => (await routed('new')) === 1201);
    await router.stop();
    await store.close();
  });

  it("hands an event of several keys to each key's lane in order, and skips an event of none", async () => {
    const { store, router, woken, version, routed, until } = await setup(0, ['v1']);
    await store.events.appendMany(
      [['s-1', 's-2', 's-3'], [], null, ['s-2', 's-2'], 'solo', ['s-3', '!unresolved']].map((k, i) => ({
        tenantId: 't',
        aggregateId: `order-${i}`,
        inferredType: 'order',
        events: [{ eventType: 'E', data: JSON.stringify({ k }) }],
      })),
    );
    router.add(await version('v1'));
    await until(async () => (await routed('v1')) === 6);
    const positions = async (key: string) =>
      (await store.lanes.runs.laneWork({ tenantId: 't', versionId: 'v1', key }, 100))!.events.map((e) => e.position);
    expect(await positions('s-1')).toEqual([1]);
    expect(await positions('s-2')).toEqual([1, 4]); // a key twice in one event: once
    expect(await positions('s-3')).toEqual([1]); // not 6: that event holds whole in !unresolved
    expect(await positions('solo')).toEqual([5]);
    expect(await positions('!unresolved')).toEqual([6]);
    expect((await store.lanes.holds.getLane({ tenantId: 't', versionId: 'v1', key: '!unresolved' }))?.heldError).toContain('INVALID_KEY');
    expect(new Set(woken.map((l) => l.key))).toEqual(new Set(['s-1', 's-2', 's-3', 'solo']));
    await router.stop();
    await store.close();
  });

  it("keeps a throwing ResolveKey's exception, event and frames with the !unresolved hold of that event", async () => {
    const { store, router, version, routed, until } = await setup(0, ['v1']);
    const frames = [{ method: 'Shop.P.ResolveKey', file: 'P.cs', line: 4 }];
    const thrown = (message: string) => ({ error: { code: 'RESOLVE_FAILED', message, exceptionType: 'System.FormatException', frames } });
    await store.events.appendMany(
      ['a', thrown('first'), thrown('second')].map((k, i) => ({
        tenantId: 't',
        aggregateId: `order-${i}`,
        inferredType: 'order',
        events: [{ eventType: 'Placed', data: JSON.stringify({ k }) }],
      })),
    );
    router.add(await version('v1'));
    await until(async () => (await routed('v1')) === 3);
    const lane = await store.lanes.holds.getLane({ tenantId: 't', versionId: 'v1', key: '!unresolved' });
    expect(lane?.heldPosition).toBe(2);
    // The details are those of the held event (position 2), not of the later one that failed too.
    expect(JSON.parse(lane!.heldFailure!)).toMatchObject({
      exceptionType: 'System.FormatException',
      eventType: 'Placed',
      version: 1,
      position: 2,
      frames,
    });
    await router.stop();
    await store.close();
  });

  it('holds an event whole when the key limit sends one of its keys to !unresolved', () => {
    const u = '!unresolved';
    expect(
      holdWhole([
        { key: 'a', position: 1 },
        { key: u, position: 2 },
        { key: 'c', position: 2 },
        { key: u, position: 2 },
        { key: 'd', position: 3 },
      ]),
    ).toEqual([
      { key: 'a', position: 1 },
      { key: u, position: 2 },
      { key: 'd', position: 3 },
    ]);
  });

  it('counts each key of an event against keysPerProjection, and holds the event whole past it', async () => {
    const { store, router, version, routed, until } = await setup(0, ['v1'], 2);
    await store.events.appendMany(
      [['a', 'b'], ['b', 'c'], ['a']].map((k, i) => ({
        tenantId: 't',
        aggregateId: `order-${i}`,
        inferredType: 'order',
        events: [{ eventType: 'E', data: JSON.stringify({ k }) }],
      })),
    );
    router.add(await version('v1'));
    await until(async () => (await routed('v1')) === 3);
    const positions = async (key: string) =>
      (await store.lanes.runs.laneWork({ tenantId: 't', versionId: 'v1', key }, 100))!.events.map((e) => e.position);
    expect(await positions('a')).toEqual([1, 3]);
    expect(await positions('b')).toEqual([1]); // event 2 is held whole: its new key c is past the limit of 2
    expect(await positions('!unresolved')).toEqual([2]);
    expect((await store.lanes.holds.getLane({ tenantId: 't', versionId: 'v1', key: '!unresolved' }))?.heldError).toContain('KEY_LIMIT');
    expect(await store.lanes.inbox.keyCount({ tenantId: 't', versionId: 'v1' })).toBe(2);
    await router.stop();
    await store.close();
  });
});
