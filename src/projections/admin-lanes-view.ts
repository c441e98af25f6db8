import { arrayOf, boolean, Infer, integer, object, string } from '../common/json-schema';
import { ProjectionVersion } from '../store/projection-catalog.port';

type VersionRef = { tenantId: string; versionId: string };

export interface AdminLanesDeps {
  /** Versions that are some projection's active or pending one. */
  liveVersions(): Promise<Pick<ProjectionVersion, 'tenantId' | 'versionId'>[]>;
  /** Lane and inbox rows of versions that are neither active nor pending. */
  orphanRows(): Promise<{ lanes: number; inboxRows: number; versions: VersionRef[] }>;
  /** The versions this instance runs a router for. */
  routedVersions(): VersionRef[];
}

/**
 * What the lanes of this instance and the store hold that no projection owns: the routers this
 * instance runs (each marked live or not), and the store's orphaned lane/inbox rows.
 */
export class AdminLanesView {
  constructor(private readonly deps: AdminLanesDeps) {}

  async read(): Promise<AdminLanes> {
    const [live, orphans] = await Promise.all([this.deps.liveVersions(), this.deps.orphanRows()]);
    const isLive = new Set(live.map((v) => `${v.tenantId}\u0000${v.versionId}`));
    const routers = this.deps.routedVersions().map((r) => ({ ...r, live: isLive.has(`${r.tenantId}\u0000${r.versionId}`) }));
    return { routers, orphans };
  }
}

const VERSION_REF_SCHEMA = { tenantId: string(), versionId: string() };

/** GET /admin/lanes. */
export const ADMIN_LANES_SCHEMA = object({
  routers: arrayOf(object({ ...VERSION_REF_SCHEMA, live: boolean() }), { description: 'the versions this instance routes' }),
  orphans: object(
    { lanes: integer(), inboxRows: integer(), versions: arrayOf(object(VERSION_REF_SCHEMA)) },
    {},
    { description: 'lane and inbox rows of versions no projection names' },
  ),
});
export type AdminLanes = Infer<typeof ADMIN_LANES_SCHEMA>;
