import { ProjectionRecord } from '../store/projection-repository.port';
import { UploadRecord } from '../store/upload-repository.port';
import { ApplyLag } from './projection-reader';
import { ProjectionStatus } from './projection-status';

const upload: UploadRecord = {
  uploadId: 'u1',
  tenantId: 't',
  kind: 'projection',
  status: 'compiled',
  sources: [],
  meta: {},
  discovered: [{ className: 'C', stateTypeName: 'S', kind: 'projection' }] as UploadRecord['discovered'],
  compilationError: null,
  assemblySha256: null,
  createdAt: 0,
  compiledAt: 1,
};
const projection: ProjectionRecord = {
  tenantId: 't',
  projectionId: 'p',
  name: 'n',
  activeVersion: 'u1',
  pendingVersion: 'u2',
  createdAt: 0,
  notifyConfig: null,
};
const lagOf = (n: number): ApplyLag => ({
  totalInboxDepth: n,
  heldLanes: 0,
  laneCount: 1,
  headPosition: n,
  appliedPosition: 0,
  lagEvents: n,
  oldestUnappliedAgeMs: 0,
});

function setup(found: { upload: UploadRecord; projection: ProjectionRecord | null }, webhook: object | null = null) {
  const deps = {
    find: jest.fn(async () => found),
    lag: jest.fn(async (_t: string, v: string) => (v === 'u1' ? lagOf(1) : lagOf(2))),
    webhookStatus: jest.fn(async () => webhook),
  };
  return { status: new ProjectionStatus(deps), deps };
}

describe('ProjectionStatus', () => {
  it('shows each deployed version with its lag only when lag is asked for', async () => {
    const { status, deps } = setup({ upload, projection });
    const plain = await status.read('t', 'p', { withLag: false });
    expect(plain).toMatchObject({ type: 'runtime', activeVersion: { uploadId: 'u1' }, pendingVersion: { uploadId: 'u2' } });
    expect(plain.activeVersion).not.toHaveProperty('applyLag');
    expect(deps.lag).not.toHaveBeenCalled();
    const withLag = await status.read('t', 'p', { withLag: true });
    expect(withLag).toMatchObject({ activeVersion: { applyLag: { lagEvents: 1 } }, pendingVersion: { applyLag: { lagEvents: 2 } } });
  });

  it('adds the webhook only when the projection has one', async () => {
    expect(await setup({ upload, projection }, { status: 'active' }).status.read('t', 'p', { withLag: false })).toMatchObject({
      webhook: { status: 'active' },
    });
    expect(await setup({ upload, projection }).status.read('t', 'p', { withLag: false })).not.toHaveProperty('webhook');
  });

  it('reads no lag or webhook for an upload not deployed yet', async () => {
    const { status, deps } = setup({ upload, projection: null });
    expect(await status.read('t', 'u1', { withLag: true })).toMatchObject({ type: 'compilation', projectionId: null });
    expect(deps.lag).not.toHaveBeenCalled();
    expect(deps.webhookStatus).not.toHaveBeenCalled();
  });
});
