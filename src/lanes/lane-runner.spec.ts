import { RawJson } from '../common/raw-json';
import { ProjectionRepository } from '../store/projection-repository.port';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import { LaneRunner } from './lane-runner';

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
    await store.projections.route(
      't',
      'v',
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
    const staleRow = (await store.projections.getLane('t', 'v', 'k'))!; // the second run's read of the row: checkpoint 0
    const first = new LaneRunner(store.projections, runtime, { batch: 100, backoffMs: [10] });
    expect(await first.run(lane)).toEqual({ status: 'idle' });
    expect(await store.projections.getLane('t', 'v', 'k')).toMatchObject({ state: '{"n":2}', appliedPosition: 2 });

    await store.projections.route('t', 'v', [{ key: 'k', position: 3 }], 3);
    const staleRepo: ProjectionRepository = Object.create(store.projections);
    staleRepo.laneWork = async (t, v, k, limit) => ({ lane: staleRow, events: (await store.projections.laneWork(t, v, k, limit))!.events });
    const second = new LaneRunner(staleRepo, runtime, { batch: 100, backoffMs: [10] });
    // It applied event 3 to the empty state (n = 1): storing that would lose events 1 and 2.
    expect(await second.run(lane)).toEqual({ status: 'more' });
    expect(await store.projections.getLane('t', 'v', 'k')).toMatchObject({ state: '{"n":2}', appliedPosition: 2 });
    // Its next run reads the lane as it is.
    expect(await first.run(lane)).toEqual({ status: 'idle' });
    expect(await store.projections.getLane('t', 'v', 'k')).toMatchObject({ state: '{"n":3}', appliedPosition: 3 });
    await store.close();
  });
});
