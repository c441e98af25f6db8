import { RawJson } from '../common/raw-json';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import { InProcessLaneScheduler } from './in-process-lane-scheduler';
import { LaneEngine } from './lane-engine';
import { LaneRunner } from './lane-runner';

/**
 * The promotion rule with a real in-memory store and a scripted runtime (keys and states are
 * the test's): a pending version stays pending until it has applied everything up to its target.
 */
describe('LaneEngine', () => {
  it('promotes a redeploy only once it has caught up, and drops the old version', async () => {
    const store = new SqliteStore({ file: ':memory:' });
    await store.migrate();
    await store.tenants.createTenant({ tenantId: 't', name: 't', createdAt: 1 });
    await store.events.appendMany([1, 2, 3, 4].map((i) => ({ tenantId: 't', aggregateId: `o-${i}`, inferredType: 'o', events: [{ eventType: 'E', data: `{"k":"k${i % 2}"}` }] })));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const runtime = {
      resolveKeys: async (_t: string, _v: string, _c: string, events: { data: RawJson }[]) => events.map((e) => JSON.parse(e.data.text).k as string),
      apply: async (_t: string, versionId: string, _c: string, groups: { state: RawJson | null; events: unknown[] }[]) => {
        if (versionId === 'v2') await gate; // the new version is slow to apply
        return groups.map((g) => ({ ok: true as const, states: g.events.map((_, i) => JSON.stringify({ n: (g.state ? JSON.parse(g.state.text).n : 0) + i + 1 })) }));
      },
      unload: async () => undefined,
    };
    const scheduler = new InProcessLaneScheduler({ concurrency: 4 });
    let engine!: LaneEngine;
    const runner = new LaneRunner(store.projections, runtime, { batch: 100, backoffMs: [10] }, () => engine.laneApplied());
    engine = new LaneEngine(store.events, store.projections, runtime, scheduler, runner, { sweepMs: 50 });
    await store.projections.deploy({ tenantId: 't', projectionId: 'p', name: 'n', version: { tenantId: 't', versionId: 'v1', projectionId: 'p', className: 'C', targetPosition: 4, createdAt: 1 } });
    await engine.start();
    const until = async (ok: () => Promise<boolean>) => {
      for (let i = 0; i < 200 && !(await ok()); i++) await new Promise((r) => setTimeout(r, 10));
    };
    await until(async () => (await store.projections.getVersion('t', 'v1'))?.caughtUpAt != null);
    expect((await store.projections.getLane('t', 'v1', 'k0'))?.state).toBe('{"n":2}');

    await store.projections.deploy({ tenantId: 't', projectionId: 'p', name: 'n', version: { tenantId: 't', versionId: 'v2', projectionId: 'p', className: 'C', targetPosition: 4, createdAt: 2 } });
    engine.track((await store.projections.getVersion('t', 'v2'))!);
    await new Promise((r) => setTimeout(r, 200));
    expect(await store.projections.get('t', 'p')).toMatchObject({ activeVersion: 'v1', pendingVersion: 'v2' });
    release();
    await until(async () => (await store.projections.get('t', 'p'))?.activeVersion === 'v2');
    expect(await store.projections.get('t', 'p')).toMatchObject({ activeVersion: 'v2', pendingVersion: null });
    // The old version is dropped right after the promotion, not in the same write.
    await until(async () => (await store.projections.getVersion('t', 'v1')) === null);
    expect(await store.projections.getVersion('t', 'v1')).toBeNull();
    expect((await store.projections.getLane('t', 'v2', 'k1'))?.state).toBe('{"n":2}');
    await engine.close();
    await store.close();
  });
});
