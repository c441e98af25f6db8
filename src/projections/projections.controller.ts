import { Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { IntQueryPipe } from '../common/int-query.pipe';
import { readMultipart } from '../common/multipart-upload';
import { Quota } from '../common/route-options';
import { TenantRecord } from '../store/tenant-repository.port';
import { CurrentTenant } from '../tenancy/current-tenant.decorator';
import { LaneOperations } from './lane-operations';
import { parseProjectionConfig, ProjectionCatalog } from './projection-catalog';
import { ProjectionReader } from './projection-reader';
import { ProjectionStatus } from './projection-status';
import { keysPageView, laneView, projectionListView, stateAnswer } from './projection-views';

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
  async upload(@CurrentTenant() tenant: TenantRecord, @Req() req: FastifyRequest) {
    const { file, fields } = await readMultipart(req);
    // The earlier shape sends `notificationConfig` (direct settings) and expects the earlier answer.
    const earlier = fields.notificationConfig !== undefined && fields.config === undefined;
    const config = earlier
      ? parseProjectionConfig(fields.notificationConfig, 'notificationConfig')
      : parseProjectionConfig(fields.config, 'config');
    const { upload: u, notifications } = await this.catalog.upload(tenant.tenantId, file, config);
    if (earlier) return { projectionId: u.uploadId, uploadId: u.uploadId, status: 'pending_compilation' };
    return {
      success: true,
      uploadId: u.uploadId,
      projectionId: null,
      status: 'compiling',
      message: `compiling; poll GET /projections/${u.uploadId}/status until status is 'compiled' or type is 'runtime'`,
      ...(config && notifications ? { notifications } : {}),
    };
  }

  @Get()
  async list(@CurrentTenant() tenant: TenantRecord) {
    return { projections: (await this.catalog.list(tenant.tenantId)).map(projectionListView) };
  }

  @Get(':id/status')
  async status(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string, @Query('include') include?: string) {
    const withLag = (include ?? '')
      .split(',')
      .map((s) => s.trim())
      .includes('lag');
    return this.statusView.read(tenant.tenantId, id, { withLag });
  }

  @Get(':id/state/:key')
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
  async remove(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string): Promise<void> {
    await this.catalog.remove(tenant.tenantId, id);
  }

  @Get(':id/lanes')
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
  async retry(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string, @Param('key') key: string) {
    return this.laneOperations.operate(tenant.tenantId, id, key, 'retry');
  }

  @Post(':id/lanes/:key/skip')
  @HttpCode(200)
  async skip(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string, @Param('key') key: string) {
    return this.laneOperations.operate(tenant.tenantId, id, key, 'skip');
  }
}
