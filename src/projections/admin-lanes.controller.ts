import { Controller, Get, Inject } from '@nestjs/common';
import { LaneEngine } from '../lanes/lane-engine';
import { ProjectionRepository } from '../store/projection-repository.port';
import { AdminApi } from '../tenancy/public.decorator';
import { PROJECTION_REPOSITORY } from './projections.tokens';

/**
 * What the lanes of this instance and the store hold that no projection owns: the routers this
 * instance runs, and lane/inbox rows of versions that are neither active nor pending. After a
 * delete or a redeploy has settled (a sweep), both name only live versions.
 */
@AdminApi()
@Controller('admin/lanes')
export class AdminLanesController {
  constructor(
    private readonly engine: LaneEngine,
    @Inject(PROJECTION_REPOSITORY) private readonly repo: ProjectionRepository,
  ) {}

  @Get()
  async view() {
    const [live, orphans] = await Promise.all([this.repo.liveVersions(), this.repo.orphanRows()]);
    const isLive = new Set(live.map((v) => `${v.tenantId}\u0000${v.versionId}`));
    const routers = this.engine.routedVersions().map((r) => ({ ...r, live: isLive.has(`${r.tenantId}\u0000${r.versionId}`) }));
    return { routers, orphans };
  }
}
