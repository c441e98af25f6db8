import { AdminLanesView } from './admin-lanes-view';

describe('AdminLanesView', () => {
  it('marks each router live only when its version is some projection’s, and passes the orphan rows on', async () => {
    const orphans = { lanes: 2, inboxRows: 3, versions: [{ tenantId: 't', versionId: 'old' }] };
    const view = new AdminLanesView({
      liveVersions: async () => [
        { tenantId: 't', versionId: 'v1' },
        { tenantId: 'u', versionId: 'old' },
      ],
      orphanRows: async () => orphans,
      routedVersions: () => [
        { tenantId: 't', versionId: 'v1' },
        { tenantId: 't', versionId: 'old' },
      ],
    });
    expect(await view.read()).toEqual({
      routers: [
        { tenantId: 't', versionId: 'v1', live: true },
        { tenantId: 't', versionId: 'old', live: false },
      ],
      orphans,
    });
  });
});
