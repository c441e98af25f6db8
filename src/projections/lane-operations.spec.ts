import { ProjectionRecord } from '../store/projection-catalog.port';
import { LaneKey } from '../store/lanes/lane-key';
import { LaneRecord } from '../store/lanes/lane-records';
import { LaneOperations } from './lane-operations';

const lane = (key: string, heldPosition: number | null): LaneRecord => ({
  key,
  state: null,
  appliedPosition: 0,
  updatedAt: null,
  heldPosition,
  heldError: heldPosition === null ? null : 'boom',
  heldFailure: null,
  attempts: heldPosition === null ? 0 : 3,
});

function setup(p: Partial<ProjectionRecord>, lanes: Record<string, LaneRecord>, changed = true) {
  const projection: ProjectionRecord = {
    tenantId: 't',
    projectionId: 'p',
    name: 'n',
    activeVersion: 'v1',
    pendingVersion: null,
    createdAt: 1,
    notifyConfig: null,
    ...p,
  };
  const store = {
    getLane: jest.fn(async ({ versionId, key }: LaneKey) => lanes[`${versionId}/${key}`] ?? null),
    release: jest.fn(async () => changed),
    skip: jest.fn(async () => changed),
  };
  const wakeLane = jest.fn(async () => undefined);
  const ops = new LaneOperations({ projection: async () => projection, lanes: store, wakeLane });
  return { ops, store, wakeLane };
}

describe('LaneOperations', () => {
  it('retries a held lane of the active version and wakes it', async () => {
    const { ops, store, wakeLane } = setup({}, { 'v1/k': lane('k', 4) });
    expect(await ops.operate('t', 'p', 'k', 'retry')).toEqual({ projectionId: 'p', key: 'k', action: 'retry', position: 4 });
    expect(store.release).toHaveBeenCalledWith({ tenantId: 't', versionId: 'v1', key: 'k' });
    expect(store.skip).not.toHaveBeenCalled();
    expect(wakeLane).toHaveBeenCalledWith({ tenantId: 't', versionId: 'v1', key: 'k' });
  });

  it('operates on the pending version when the lane is held there', async () => {
    const { ops, store } = setup({ pendingVersion: 'v2' }, { 'v1/k': lane('k', 1), 'v2/k': lane('k', 7) });
    expect(await ops.operate('t', 'p', 'k', 'skip')).toMatchObject({ action: 'skip', position: 7 });
    expect(store.skip).toHaveBeenCalledWith({ tenantId: 't', versionId: 'v2', key: 'k' });
  });

  it('falls back to the active version when the pending one does not hold the lane', async () => {
    const { ops, store } = setup({ pendingVersion: 'v2' }, { 'v1/k': lane('k', 3), 'v2/k': lane('k', null) });
    expect(await ops.operate('t', 'p', 'k', 'skip')).toMatchObject({ position: 3 });
    expect(store.skip).toHaveBeenCalledWith({ tenantId: 't', versionId: 'v1', key: 'k' });
  });

  it('refuses a lane that is not held, or no longer held when changed, and wakes nothing', async () => {
    const free = setup({}, { 'v1/k': lane('k', null) });
    await expect(free.ops.operate('t', 'p', 'k', 'retry')).rejects.toMatchObject({ code: 'VALIDATION_FAILED', details: { field: 'key' } });
    const raced = setup({}, { 'v1/k': lane('k', 2) }, false);
    await expect(raced.ops.operate('t', 'p', 'k', 'retry')).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      message: "lane 'k' is not held",
    });
    expect(raced.wakeLane).not.toHaveBeenCalled();
  });

  it('answers NOT_FOUND for an unknown lane and for a projection without a version', async () => {
    await expect(setup({}, {}).ops.operate('t', 'p', 'k', 'retry')).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: "lane 'k' not found",
    });
    await expect(setup({ activeVersion: null }, {}).ops.operate('t', 'p', 'k', 'retry')).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: "projection 'p' not found",
    });
  });
});
