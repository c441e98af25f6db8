import { RawJson } from '../common/raw-json';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import { AppliedSignal } from '../lanes/applied-signal';
import { ProjectionReader } from './projection-reader';
import { stateAnswer } from './projection-views';
import { elapse } from '../../test/support/wait';

/** A real (in-memory) store; the reader's gate is what is under test. */
async function setup() {
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
    version: { tenantId: 't', versionId: 'v', projectionId: 'p', className: 'C', targetPosition: 3, createdAt: 1 },
  });
  const signal = new AppliedSignal();
  return { store, signal, reader: new ProjectionReader(store.projections, store.lanes.reads, store.events, 300, signal) };
}

describe('ProjectionReader', () => {
  it('answers 202 catching_up until the active version has caught up, then the state', async () => {
    const { store, reader } = await setup();
    await store.lanes.inbox.route({ tenantId: 't', versionId: 'v' }, [{ key: 'k', position: 1 }], 3);
    await store.lanes.runs.laneWork({ tenantId: 't', versionId: 'v', key: 'k' }, 1);
    await store.lanes.runs.applied(
      { tenantId: 't', versionId: 'v', key: 'k' },
      { state: '{"n":1}', fromPosition: 0, appliedPosition: 1, updatedAt: 5 },
    );
    expect(stateAnswer(await reader.state('t', 'p', 'k'))).toMatchObject({
      status: 202,
      body: { projectionId: 'p', status: 'catching_up' },
    });
    await store.projections.markCaughtUp('t', 'v', 10);
    expect(stateAnswer(await reader.state('t', 'p', 'k'))).toMatchObject({
      status: 200,
      body: { stateKey: 'k', state: new RawJson('{"n":1}'), appliedPosition: 1 },
    });
    await expect(reader.state('t', 'p', 'nope')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(reader.state('t', 'missing', 'k')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('answers from the new version when a promotion drops the one it read in the middle of the read', async () => {
    const { store, reader } = await setup();
    const stateOf = async (versionId: string, n: number) => {
      await store.lanes.inbox.route({ tenantId: 't', versionId }, [{ key: 'k', position: 1 }], 3);
      await store.lanes.runs.laneWork({ tenantId: 't', versionId, key: 'k' }, 1);
      await store.lanes.runs.applied(
        { tenantId: 't', versionId, key: 'k' },
        { state: `{"n":${n}}`, fromPosition: 0, appliedPosition: 1, updatedAt: 5 },
      );
      await store.projections.markCaughtUp('t', versionId, 10);
    };
    await stateOf('v', 1);
    await store.projections.deploy({
      tenantId: 't',
      projectionId: 'p',
      name: 'n',
      version: { tenantId: 't', versionId: 'v2', projectionId: 'p', className: 'C', targetPosition: 3, createdAt: 2 },
    });
    await stateOf('v2', 10);
    // The promotion lands between the reader's read of the projection and its read of the lane.
    const getLane = store.lanes.reads.getLane.bind(store.lanes.reads);
    jest.spyOn(store.lanes.reads, 'getLane').mockImplementationOnce(async (lane) => {
      expect(await store.projections.promote('t', 'p', 'v2')).toBe('v');
      await store.lanes.sweep.dropVersion({ tenantId: 't', versionId: 'v' });
      return getLane(lane);
    });
    expect(stateAnswer(await reader.state('t', 'p', 'k'))).toMatchObject({ status: 200, body: { state: new RawJson('{"n":10}') } });
  });

  it('waits for minPosition, wakes on the applied signal, and gives up with 202 after its bound', async () => {
    const { store, reader, signal } = await setup();
    await store.projections.markCaughtUp('t', 'v', 10);
    await store.lanes.inbox.route({ tenantId: 't', versionId: 'v' }, [{ key: 'k', position: 2 }], 3);
    await store.lanes.runs.laneWork({ tenantId: 't', versionId: 'v', key: 'k' }, 1);
    const t0 = Date.now();
    expect(stateAnswer(await reader.state('t', 'p', 'k', 2))).toMatchObject({ status: 202, body: { minPosition: 2 } });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    const waiting = reader.state('t', 'p', 'k', 2);
    setTimeout(() => {
      void store.lanes.runs
        .applied({ tenantId: 't', versionId: 'v', key: 'k' }, { state: '{"n":2}', fromPosition: 0, appliedPosition: 2, updatedAt: 6 })
        .then(() => signal.notify('v', 'k'));
    }, 30);
    expect(stateAnswer(await waiting)).toMatchObject({ status: 200, body: { state: new RawJson('{"n":2}') } });
  });

  it('never answers a minPosition read with a lane row read before the lane applied the event (it emptied the inbox meanwhile)', async () => {
    const { store, reader } = await setup();
    await store.projections.markCaughtUp('t', 'v', 10);
    await store.lanes.inbox.route({ tenantId: 't', versionId: 'v' }, [{ key: 'k', position: 2 }], 3);
    await store.lanes.runs.laneWork({ tenantId: 't', versionId: 'v', key: 'k' }, 1);
    // The lane stores position 2 between the reader's read of its row and its look at the inbox.
    const repo = store.lanes.reads;
    const nextInboxPosition = repo.nextInboxPosition.bind(repo);
    jest.spyOn(repo, 'nextInboxPosition').mockImplementationOnce(async (...args) => {
      await store.lanes.runs.applied(
        { tenantId: 't', versionId: 'v', key: 'k' },
        { state: '{"n":2}', fromPosition: 0, appliedPosition: 2, updatedAt: 6 },
      );
      return nextInboxPosition(...args);
    });
    expect(stateAnswer(await reader.state('t', 'p', 'k', 2))).toMatchObject({
      status: 200,
      body: { state: new RawJson('{"n":2}'), appliedPosition: 2 },
    });
  });

  it('reports lag from head and applied positions, counting held lanes as not applied', async () => {
    const { store, reader } = await setup();
    await store.lanes.inbox.route(
      { tenantId: 't', versionId: 'v' },
      [
        { key: 'a', position: 1 },
        { key: 'b', position: 2 },
      ],
      3,
    );
    await store.lanes.runs.laneWork({ tenantId: 't', versionId: 'v', key: 'a' }, 1);
    await store.lanes.runs.failed({ tenantId: 't', versionId: 'v', key: 'a' }, { position: 1, error: 'x', hold: true });
    await elapse(25, 'the oldest unapplied event is now at least 25 ms old');
    const lag = await reader.lag('t', 'v');
    expect(lag).toMatchObject({ totalInboxDepth: 2, heldLanes: 1, headPosition: 3, appliedPosition: 0, lagEvents: 3 });
    expect(lag!.oldestUnappliedAgeMs).toBeGreaterThanOrEqual(20);
  });
});
