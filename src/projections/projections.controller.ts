import { Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { IntQueryPipe } from '../common/int-query.pipe';
import { readMultipart } from '../common/multipart-upload';
import { Quota } from '../common/route-options';
import { TenantRecord } from '../store/tenant-repository.port';
import { CurrentTenant } from '../tenancy/current-tenant.decorator';
import { LaneOperations } from './lane-operations';
import { ProjectionCatalog } from './projection-catalog';
import { ProjectionReader } from './projection-reader';
import { ProjectionStatus } from './projection-status';
import { keysPageView, laneView, projectionListView, stateAnswer } from './projection-views';
import { RequiresScope } from '../tenancy/scopes';

/** Lanes listed per page by GET /projections/{id}/lanes. */
const LANE_PAGE = 100;

@Controller('projections')
export class ProjectionsController {
  constructor(
    private readonly catalog: ProjectionCatalog,
    private readonly reader: ProjectionReader,
    private readonly statusView: ProjectionStatus,
    private readonly laneOperations: LaneOperations,
  ) {}

  @Post('upload')
  @HttpCode(202)
  @Quota('upload')
  @RequiresScope('deploy')
  async upload(@CurrentTenant() tenant: TenantRecord, @Req() req: FastifyRequest) {
    return this.catalog.acceptUpload(tenant.tenantId, await readMultipart(req));
  }

  @Get()
  @RequiresScope('state:read')
  async list(@CurrentTenant() tenant: TenantRecord) {
    return { projections: (await this.catalog.list(tenant.tenantId)).map(projectionListView) };
  }

  @Get(':id/status')
  @RequiresScope('state:read')
  async status(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string, @Query('include') include?: string) {
    const withLag = (include ?? '')
      .split(',')
      .map((s) => s.trim())
      .includes('lag');
    return this.statusView.read(tenant.tenantId, id, { withLag });
  }

  @Get(':id/state/:key')
  @RequiresScope('state:read')
  async state(
    @CurrentTenant() tenant: TenantRecord,
    @Param('id') id: string,
    @Param('key') key: string,
    @Query('minPosition', new IntQueryPipe('minPosition', undefined)) minPosition: number | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const answer = stateAnswer(await this.reader.state(tenant.tenantId, id, key, minPosition));
    void reply.status(answer.status);
    return answer.body;
  }

  @Get(':id/keys')
  @RequiresScope('state:read')
  async keys(
    @CurrentTenant() tenant: TenantRecord,
    @Param('id') id: string,
    @Query('after') after: string | undefined,
    @Query('limit', new IntQueryPipe('limit', 100, 1, 1000)) limit: number,
  ) {
    return keysPageView(await this.reader.lanes(tenant.tenantId, id, { afterKey: after ?? '', limit }));
  }

  @Delete(':id')
  @HttpCode(204)
  @RequiresScope('deploy')
  async remove(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string): Promise<void> {
    await this.catalog.remove(tenant.tenantId, id);
  }

  @Get(':id/lanes')
  @RequiresScope('state:read')
  async lanes(
    @CurrentTenant() tenant: TenantRecord,
    @Param('id') id: string,
    @Query('held') held?: string,
    @Query('after') after?: string,
  ) {
    const lanes = await this.reader.lanes(tenant.tenantId, id, { afterKey: after ?? '', limit: LANE_PAGE, heldOnly: held === 'true' });
    return { lanes: lanes.map(laneView) };
  }

  @Post(':id/lanes/:key/retry')
  @HttpCode(200)
  @RequiresScope('deploy')
  async retry(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string, @Param('key') key: string) {
    return this.laneOperations.operate(tenant.tenantId, id, key, 'retry');
  }

  @Post(':id/lanes/:key/skip')
  @HttpCode(200)
  @RequiresScope('deploy')
  async skip(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string, @Param('key') key: string) {
    return this.laneOperations.operate(tenant.tenantId, id, key, 'skip');
  }
}
