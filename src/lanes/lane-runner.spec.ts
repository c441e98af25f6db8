import { RawJson } from '../common/raw-json';
import { LaneRuns } from '../store/lanes/lane-runs.port';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import { AppMetrics, ApplyKind, ApplyOutcome } from '../observability/metrics/app-metrics';
import { LaneRunner } from './lane-runner';
import { elapse } from '../../test/support/wait';

/**
 * Two runs of one lane at once (a Redis flush re-queues a lane that is running; a lease lapses on
 * a loaded machine). The store reads a lane's row and its inbox in two statements, so the later
 * run can read the checkpoint from before the earlier run stored and the inbox from after it
 * (the events the earlier run consumed already gone). A real in-memory store; the stale read is
 * staged by handing the second run the lane row taken before the first run stored.
 */
describe('LaneRunner, two runs of one lane at once', () => {
  it('keeps nothing of a run whose checkpoint moved meanwhile, and runs it again: no event lost', async () => {
    const store = new SqliteStore({ file: ':memory:' });
    await store.migrate();
    await store.tenants.createTenant({ tenantId: 't', name: 't', createdAt: 1 });
    await store.events.appendMany(
      [1, 2, 3].map((i) => ({ tenantId: 't', aggregateId: `o-${i}`, inferredType: 'o', events: [{ eventType: 'E', data: '{}' }] })),
    );
    await store.projections.deploy({
      tenantId: 't',
      projectionId: 'p',
      name: 'n',
      version: { tenantId: 't', versionId: 'v', projectionId: 'p', className: 'C', targetPosition: 0, createdAt: 1 },
    });
    await store.lanes.inbox.route(
      { tenantId: 't', versionId: 'v' },
      [1, 2].map((position) => ({ key: 'k', position })),
      2,
    );

    // The state counts the events applied to it.
    const runtime = {
      resolveKeys: async () => [],
      apply: async (_t: string, _v: string, _c: string, groups: { state: RawJson | null; events: unknown[] }[]) =>
        groups.map((g) => ({
          ok: true as const,
          states: g.events.map((_, i) => JSON.stringify({ n: (g.state ? JSON.parse(g.state.text).n : 0) + i + 1 })),
        })),
    };
    const lane = { tenantId: 't', versionId: 'v', key: 'k' };
    const staleRow = (await store.lanes.reads.getLane({ tenantId: 't', versionId: 'v', key: 'k' }))!; // the second run's read of the row: checkpoint 0
    const first = new LaneRunner(store.lanes, store.projections, runtime, { batch: 100, backoffMs: [10] });
    expect(await first.run(lane)).toEqual({ status: 'idle' });
    expect(await store.lanes.reads.getLane({ tenantId: 't', versionId: 'v', key: 'k' })).toMatchObject({
      state: '{"n":2}',
      appliedPosition: 2,
    });

    await store.lanes.inbox.route({ tenantId: 't', versionId: 'v' }, [{ key: 'k', position: 3 }], 3);
    const staleRuns: LaneRuns = Object.create(store.lanes.runs);
    staleRuns.laneWork = async (ref, limit) => ({ lane: staleRow, events: (await store.lanes.runs.laneWork(ref, limit))!.events });
    const second = new LaneRunner({ ...store.lanes, runs: staleRuns }, store.projections, runtime, { batch: 100, backoffMs: [10] });
    // It applied event 3 to the empty state (n = 1): storing that would lose events 1 and 2.
    expect(await second.run(lane)).toEqual({ status: 'more' });
    expect(await store.lanes.reads.getLane({ tenantId: 't', versionId: 'v', key: 'k' })).toMatchObject({
      state: '{"n":2}',
      appliedPosition: 2,
    });
    // Its next run reads the lane as it is.
    expect(await first.run(lane)).toEqual({ status: 'idle' });
    expect(await store.lanes.reads.getLane({ tenantId: 't', versionId: 'v', key: 'k' })).toMatchObject({
      state: '{"n":3}',
      appliedPosition: 3,
    });
    await store.close();
  });
});

describe('LaneRunner and the metrics', () => {
  it('counts each Apply call with its outcome: a failing event, then its lane applied', async () => {
    const store = new SqliteStore({ file: ':memory:' });
    await store.migrate();
    await store.tenants.createTenant({ tenantId: 't', name: 't', createdAt: 1 });
    await store.events.appendMany([{ tenantId: 't', aggregateId: 'o-1', inferredType: 'o', events: [{ eventType: 'E', data: '{}' }] }]);
    await store.projections.deploy({
      tenantId: 't',
      projectionId: 'p',
      name: 'n',
      version: { tenantId: 't', versionId: 'v', projectionId: 'p', className: 'C', targetPosition: 0, createdAt: 1 },
    });
    await store.lanes.inbox.route({ tenantId: 't', versionId: 'v' }, [{ key: 'k', position: 1 }], 1);
    let fail = true;
    const runtime = {
      resolveKeys: async () => [],
      apply: async (_t: string, _v: string, _c: string, groups: { events: unknown[] }[]) =>
        groups.map((g) =>
          fail
            ? { ok: false as const, states: [], failedIndex: 0, error: { code: 'APPLY_FAILED', message: 'boom' } }
            : { ok: true as const, states: g.events.map(() => '{}') },
        ),
    };
    const calls: string[] = [];
    const metrics = new (class extends AppMetrics {
      override applied(kind: ApplyKind, outcome: ApplyOutcome, seconds: number): void {
        calls.push(`${kind}:${outcome}:${seconds >= 0}`);
      }
    })();
    const runner = new LaneRunner(
      store.lanes,
      store.projections,
      runtime as any,
      { batch: 100, backoffMs: [10] },
      undefined,
      undefined,
      metrics,
    );
    const lane = { tenantId: 't', versionId: 'v', key: 'k' };
    expect(await runner.run(lane)).toEqual({ status: 'retry', afterMs: 10 });
    fail = false;
    expect(await runner.run(lane)).toEqual({ status: 'idle' });
    expect(calls).toEqual(['projection:failed:true', 'projection:ok:true']);
    await store.close();
  });
});

describe('LaneRunner holding a lane', () => {
  it("keeps the Apply exception's type, the event and the tenant's frames with the hold", async () => {
    const store = new SqliteStore({ file: ':memory:' });
    await store.migrate();
    await store.tenants.createTenant({ tenantId: 't', name: 't', createdAt: 1 });
    await store.events.appendMany([
      { tenantId: 't', aggregateId: 'o-1', inferredType: 'o', events: [{ eventType: 'Placed', data: '{}' }] },
    ]);
    await store.projections.deploy({
      tenantId: 't',
      projectionId: 'p',
      name: 'n',
      version: { tenantId: 't', versionId: 'v', projectionId: 'p', className: 'C', targetPosition: 0, createdAt: 1 },
    });
    await store.lanes.inbox.route({ tenantId: 't', versionId: 'v' }, [{ key: 'k', position: 1 }], 1);
    const frames = [{ method: 'Shop.P.Apply', file: 'Shop/P.cs', line: 12 }];
    const error = { code: 'APPLY_FAILED', message: 'boom', exceptionType: 'System.InvalidOperationException', stackTrace: 'host', frames };
    const runtime = {
      resolveKeys: async () => [],
      apply: async (_t: string, _v: string, _c: string, groups: unknown[]) =>
        groups.map(() => ({ ok: false as const, states: [], failedIndex: 0, error })),
    };
    const runner = new LaneRunner(store.lanes, store.projections, runtime as any, { batch: 100, backoffMs: [] });
    const lane = { tenantId: 't', versionId: 'v', key: 'k' };
    expect(await runner.run(lane)).toEqual({ status: 'held' });
    const held = await store.lanes.reads.getLane(lane);
    expect(held).toMatchObject({ heldPosition: 1, heldError: 'APPLY_FAILED: boom' });
    const failure = JSON.parse(held!.heldFailure!);
    expect(failure).toEqual({
      exceptionType: 'System.InvalidOperationException',
      eventType: 'Placed',
      eventId: expect.any(String),
      version: 1,
      position: 1,
      frames,
    });
    expect(failure).not.toHaveProperty('stackTrace'); // the host's whole trace is for its log, never kept or shown
    await store.close();
  });
});

describe('LaneRunner with a lease (several instances on BullMQ)', () => {
  async function setup() {
    const store = new SqliteStore({ file: ':memory:' });
    await store.migrate();
    await store.tenants.createTenant({ tenantId: 't', name: 't', createdAt: 1 });
    await store.events.appendMany([{ tenantId: 't', aggregateId: 'o-1', inferredType: 'o', events: [{ eventType: 'E', data: '{}' }] }]);
    await store.projections.deploy({
      tenantId: 't',
      projectionId: 'p',
      name: 'n',
      version: { tenantId: 't', versionId: 'v', projectionId: 'p', className: 'C', targetPosition: 0, createdAt: 1 },
    });
    await store.lanes.inbox.route({ tenantId: 't', versionId: 'v' }, [{ key: 'k', position: 1 }], 1);
    return store;
  }
  const lane = { tenantId: 't', versionId: 'v', key: 'k' };

  it('renews its lease while a run outlasts it, so another instance cannot take the lane mid-run', async () => {
    const store = await setup();
    let release!: () => void;
    const applying = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const runtime = {
      resolveKeys: async () => [],
      apply: async (_t: string, _v: string, _c: string, groups: { events: unknown[] }[]) => {
        started();
        await applying;
        return groups.map((g) => ({ ok: true as const, states: g.events.map(() => '{"n":1}') }));
      },
    };
    const ttlMs = 300;
    const a = new LaneRunner(store.lanes, store.projections, runtime as any, { batch: 100, backoffMs: [10], lease: { owner: 'a', ttlMs } });
    const run = a.run(lane);
    await running;
    // Three lease lengths later, the lease is still a's: renewed every third of it.
    const waitUntil = Date.now() + 3 * ttlMs;
    await elapse(waitUntil - Date.now(), 'three lease lengths: a lease not renewed would have expired');
    expect(await store.lanes.runs.acquireLease({ tenantId: 't', versionId: 'v', key: 'k' }, 'b', Date.now(), Date.now() + ttlMs)).toBe(
      false,
    );
    release();
    expect(await run).toEqual({ status: 'idle' });
    await a.close(); // the release is committed
    expect(await store.lanes.runs.acquireLease({ tenantId: 't', versionId: 'v', key: 'k' }, 'b', Date.now(), Date.now() + ttlMs)).toBe(
      true,
    );
    expect(await store.lanes.reads.getLane({ tenantId: 't', versionId: 'v', key: 'k' })).toMatchObject({
      state: '{"n":1}',
      appliedPosition: 1,
    });
    await store.close();
  });

  it('keeps nothing of a run whose lease another instance took over meanwhile (a pause longer than the lease)', async () => {
    const store = await setup();
    const takeOver = async () => {
      const later = Date.now() + 120_000; // past a's lease (60 s)
      expect(await store.lanes.runs.acquireLease({ tenantId: 't', versionId: 'v', key: 'k' }, 'b', later, later + 60_000)).toBe(true);
    };
    const runtime = {
      resolveKeys: async () => [],
      apply: async (_t: string, _v: string, _c: string, groups: { events: unknown[] }[]) => {
        await takeOver(); // while a's Apply runs, its lease lapses and b takes the lane
        return groups.map((g) => ({ ok: true as const, states: g.events.map(() => '{"by":"a"}') }));
      },
    };
    const a = new LaneRunner(store.lanes, store.projections, runtime as any, {
      batch: 100,
      backoffMs: [10],
      lease: { owner: 'a', ttlMs: 60_000 },
    });
    // Its write is refused (b holds the lease): nothing kept, the run is to be tried again.
    expect(await a.run(lane)).toEqual({ status: 'more' });
    expect(await store.lanes.reads.getLane({ tenantId: 't', versionId: 'v', key: 'k' })).toMatchObject({ state: null, appliedPosition: 0 });
    await a.close();
    await store.close();
  });
});

describe('LaneRunner and projections of several keys per event (IResolveKeys)', () => {
  it('reroutes an !unresolved event to each of its keys, and applies each lane with its own key', async () => {
    const store = new SqliteStore({ file: ':memory:' });
    await store.migrate();
    await store.tenants.createTenant({ tenantId: 't', name: 't', createdAt: 1 });
    await store.events.appendMany(
      [1, 2].map((i) => ({ tenantId: 't', aggregateId: `o-${i}`, inferredType: 'o', events: [{ eventType: 'E', data: '{}' }] })),
    );
    await store.projections.deploy({
      tenantId: 't',
      projectionId: 'p',
      name: 'n',
      version: { tenantId: 't', versionId: 'v', projectionId: 'p', className: 'C', targetPosition: 0, createdAt: 1 },
    });
    // Both events were held in !unresolved (a ResolveKeys that threw); the operator's retry runs that lane.
    await store.lanes.inbox.route(
      { tenantId: 't', versionId: 'v' },
      [1, 2].map((position) => ({ key: '!unresolved', position })),
      2,
    );
    const appliedKeys: (string | undefined)[] = [];
    const runtime = {
      resolveKeys: async () => [['a', 'b', 'a'], ['b']],
      apply: async (_t: string, _v: string, _c: string, groups: { key?: string; events: unknown[] }[]) => {
        appliedKeys.push(...groups.map((g) => g.key));
        return groups.map((g) => ({ ok: true as const, states: g.events.map(() => JSON.stringify({ key: g.key })) }));
      },
    };
    const runner = new LaneRunner(store.lanes, store.projections, runtime, { batch: 100, backoffMs: [10] });
    const result = await runner.run({ tenantId: 't', versionId: 'v', key: '!unresolved' });
    expect(result.status).toBe('idle');
    expect(new Set(('wake' in result ? result.wake : [])?.map((l) => l.key))).toEqual(new Set(['a', 'b']));
    const inbox = async (key: string) =>
      (await store.lanes.runs.laneWork({ tenantId: 't', versionId: 'v', key }, 100))!.events.map((e) => e.position);
    expect(await inbox('a')).toEqual([1]);
    expect(await inbox('b')).toEqual([1, 2]);
    expect(await runner.run({ tenantId: 't', versionId: 'v', key: 'b' })).toEqual({ status: 'idle' });
    expect(appliedKeys).toEqual(['b']);
    expect(await store.lanes.reads.getLane({ tenantId: 't', versionId: 'v', key: 'b' })).toMatchObject({
      state: '{"key":"b"}',
      appliedPosition: 2,
    });
    await store.close();
  });
});
