import { Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, notFound } from '../common/domain-error';
import { isoTime } from '../common/iso-time';
import { readMultipart } from '../common/multipart-upload';
import { Quota } from '../common/route-options';
import { LaneEngine } from '../lanes/lane-engine';
import { ProjectionRepository } from '../store/projection-repository.port';
import { TenantRecord } from '../store/tenant-repository.port';
import { CurrentTenant } from '../tenancy/current-tenant.decorator';
import { parseProjectionConfig, ProjectionCatalog } from './projection-catalog';
import { ProjectionReader } from './projection-reader';
import { laneView, projectionListView, projectionStatusView } from './projection-views';
import { PROJECTION_REPOSITORY } from './projections.tokens';

@Controller('projections')
export class ProjectionsController {
  constructor(
    private readonly catalog: ProjectionCatalog,
    private readonly reader: ProjectionReader,
    private readonly engine: LaneEngine,
    @Inject(PROJECTION_REPOSITORY) private readonly repo: ProjectionRepository,
  ) {}

  @Post('upload')
  @HttpCode(202)
  @Quota('upload')
  async upload(@CurrentTenant() tenant: TenantRecord, @Req() req: FastifyRequest) {
    const { file, fields } = await readMultipart(req);
    // The earlier shape sends `notificationConfig` (direct settings) and expects the earlier answer.
    const earlier = fields.notificationConfig !== undefined && fields.config === undefined;
    const config = earlier ? parseProjectionConfig(fields.notificationConfig, 'notificationConfig') : parseProjectionConfig(fields.config, 'config');
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
    return { projections: (await this.repo.list(tenant.tenantId)).map(projectionListView) };
  }

  @Get(':id/status')
  async status(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string, @Query('include') include?: string) {
    const { upload, projection } = await this.catalog.find(tenant.tenantId, id);
    const wantLag = (include ?? '').split(',').map((s) => s.trim()).includes('lag');
    let lag;
    if (wantLag && projection) {
      const [active, pending] = await Promise.all([
        projection.activeVersion ? this.reader.lag(tenant.tenantId, projection.activeVersion) : undefined,
        projection.pendingVersion ? this.reader.lag(tenant.tenantId, projection.pendingVersion) : undefined,
      ]);
      lag = { active, pending };
    }
    const webhook = projection ? await this.catalog.webhookStatus(tenant.tenantId, projection) : null;
    return { ...projectionStatusView(upload, projection, lag), ...(webhook ? { webhook } : {}) };
  }

  @Get(':id/state/:key')
  async state(
    @CurrentTenant() tenant: TenantRecord,
    @Param('id') id: string,
    @Param('key') key: string,
    @Query('minPosition') minPosition: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const r = await this.reader.state(tenant.tenantId, id, key, minPosition);
    void reply.status(r.status);
    return r.status === 200 ? { ...r.body, updatedAt: isoTime(r.body.updatedAt) } : r.body;
  }

  @Get(':id/keys')
  async keys(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string, @Query('after') after?: string, @Query('limit') limit?: string) {
    const p = await this.catalog.projection(tenant.tenantId, id);
    const lanes = await this.reader.keys(tenant.tenantId, p, after ?? '', limit);
    return { keys: lanes.map((l) => l.key), ...(lanes.length ? { next: lanes[lanes.length - 1].key } : {}) };
  }

  @Delete(':id')
  @HttpCode(204)
  async remove(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string): Promise<void> {
    await this.catalog.remove(tenant.tenantId, id);
  }

  @Get(':id/lanes')
  async lanes(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string, @Query('held') held?: string, @Query('after') after?: string) {
    const p = await this.catalog.projection(tenant.tenantId, id);
    if (!p.activeVersion) return { lanes: [] };
    const lanes = await this.repo.listLanes(tenant.tenantId, p.activeVersion, { afterKey: after ?? '', limit: 100, heldOnly: held === 'true' });
    return { lanes: lanes.map(laneView) };
  }

  @Post(':id/lanes/:key/retry')
  @HttpCode(200)
  async retry(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string, @Param('key') key: string) {
    return this.operate(tenant.tenantId, id, key, 'retry');
  }

  @Post(':id/lanes/:key/skip')
  @HttpCode(200)
  async skip(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string, @Param('key') key: string) {
    return this.operate(tenant.tenantId, id, key, 'skip');
  }

  private async operate(tenantId: string, id: string, key: string, op: 'retry' | 'skip') {
    const p = await this.catalog.projection(tenantId, id);
    const versionId = p.pendingVersion && (await this.repo.getLane(tenantId, p.pendingVersion, key))?.heldPosition != null ? p.pendingVersion : p.activeVersion;
    if (!versionId) throw notFound(`projection '${id}'`);
    const lane = await this.repo.getLane(tenantId, versionId, key);
    if (!lane) throw notFound(`lane '${key}'`);
    if (lane.heldPosition === null) throw new DomainError('VALIDATION_FAILED', `lane '${key}' is not held`, { field: 'key' });
    const done = op === 'retry' ? await this.repo.release(tenantId, versionId, key) : await this.repo.skip(tenantId, versionId, key);
    if (!done) throw new DomainError('VALIDATION_FAILED', `lane '${key}' is not held`, { field: 'key' });
    await this.engine.wakeLane({ tenantId, versionId, key });
    return { projectionId: id, key, action: op, position: lane.heldPosition };
  }
}
