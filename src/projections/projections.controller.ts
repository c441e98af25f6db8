import { Controller, Delete, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { IntQueryPipe } from '../common/int-query.pipe';
import { readMultipart } from '../common/multipart-upload';
import { Quota } from '../common/route-options';
import { TenantRecord } from '../store/tenant-repository.port';
import { CurrentTenant } from '../tenancy/current-tenant.decorator';
import { LANE_OPERATION_RESULT_SCHEMA, LaneOperations } from './lane-operations';
import { PROJECTION_UPLOAD_ANSWER_SCHEMA, ProjectionCatalog } from './projection-catalog';
import { ProjectionReader } from './projection-reader';
import { ProjectionStatus } from './projection-status';
import {
  CATCHING_UP_SCHEMA,
  KEYS_PAGE_SCHEMA,
  keysPageView,
  LANES_PAGE_SCHEMA,
  laneView,
  PROJECTION_LIST_SCHEMA,
  PROJECTION_STATE_SCHEMA,
  PROJECTION_STATUS_SCHEMA,
  projectionListView,
  stateAnswer,
} from './projection-views';
import { RequiresScope } from '../tenancy/scopes';
import { ARCHIVE_ERRORS, ApiOperation, json, noContent } from '../common/api-docs';
import { object, string } from '../common/json-schema';
import { SourceValidator, VALIDATE_BODY, VALIDATION_SCHEMA } from '../tenant-code/compiler/source-validator';

/** The multipart form the upload reads (readMultipart; the document describes it, nothing validates by it). */
const PROJECTION_UPLOAD_BODY = object(
  { file: string({ contentMediaType: 'application/zip', description: 'zip of .cs sources with a projection implementation' }) },
  {
    config: string({
      contentMediaType: 'application/json',
      description:
        'JSON: the notification settings ({webhook: {url, …}, sse, isolateSecret}) wrapped as {notifications: {…}} or at top level; name',
    }),
    notificationConfig: string({ contentMediaType: 'application/json', description: 'earlier shape: the notification settings directly' }),
  },
);

/** Lanes listed per page by GET /projections/{id}/lanes. */
const LANE_PAGE = 100;

@Controller('projections')
export class ProjectionsController {
  constructor(
    private readonly catalog: ProjectionCatalog,
    private readonly reader: ProjectionReader,
    private readonly statusView: ProjectionStatus,
    private readonly laneOperations: LaneOperations,
    private readonly validator: SourceValidator,
  ) {}

  @Post('validate')
  @HttpCode(200)
  @Quota('upload')
  @RequiresScope('deploy')
  @ApiOperation({
    tag: 'projections',
    summary: 'Compile and check a projection archive, deploying and storing nothing',
    description:
      'Every diagnostic at once (compiler errors, sandbox refusals, warnings; each with file, line and column). Counts against the upload quota: it costs a compile.',
    body: { contentType: 'multipart/form-data', schema: VALIDATE_BODY },
    responses: { 200: json('the verdict, valid or not', VALIDATION_SCHEMA) },
    errors: [...ARCHIVE_ERRORS, 'RUNTIME_UNAVAILABLE'],
  })
  async validate(@Req() req: FastifyRequest) {
    return this.validator.validate('projection', (await readMultipart(req)).file);
  }

  @Post('upload')
  @HttpCode(202)
  @Quota('upload')
  @RequiresScope('deploy')
  @ApiOperation({
    tag: 'projections',
    summary: 'Upload a projection archive (compiled, then deployed, in the background)',
    body: { contentType: 'multipart/form-data', schema: PROJECTION_UPLOAD_BODY },
    responses: { 202: json('accepted, compiling; poll GET /projections/{uploadId}/status', PROJECTION_UPLOAD_ANSWER_SCHEMA) },
    errors: [...ARCHIVE_ERRORS, 'WEBHOOK_URL_REFUSED', 'QUOTA_EXCEEDED'],
  })
  async upload(@CurrentTenant() tenant: TenantRecord, @Req() req: FastifyRequest) {
    return this.catalog.acceptUpload(tenant.tenantId, await readMultipart(req));
  }

  @Get()
  @RequiresScope('state:read')
  @ApiOperation({
    tag: 'projections',
    summary: "The tenant's projections",
    responses: { 200: json('every projection with its versions', PROJECTION_LIST_SCHEMA) },
  })
  async list(@CurrentTenant() tenant: TenantRecord) {
    return { projections: (await this.catalog.list(tenant.tenantId)).map(projectionListView) };
  }

  @Get(':id/status')
  @RequiresScope('state:read')
  @ApiOperation({
    tag: 'projections',
    summary: "A projection's status record, by uploadId or stable projectionId",
    parameters: { include: { description: "comma-separated optional sections: 'lag' adds applyLag to each version" } },
    responses: { 200: json('the status record (current and earlier fields together)', PROJECTION_STATUS_SCHEMA) },
    errors: ['NOT_FOUND'],
  })
  async status(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string, @Query('include') include?: string) {
    const withLag = (include ?? '')
      .split(',')
      .map((s) => s.trim())
      .includes('lag');
    return this.statusView.read(tenant.tenantId, id, { withLag });
  }

  @Get(':id/state/:key')
  @RequiresScope('state:read')
  @ApiOperation({
    tag: 'projections',
    summary: 'The state under a key (URL-encoded)',
    parameters: { minPosition: { description: 'wait (up to PROJECTION_READ_WAIT_MS) until the state reflects this position' } },
    responses: {
      200: json('the state', PROJECTION_STATE_SCHEMA),
      202: json('the projection is catching up (or has not reached minPosition): read again', CATCHING_UP_SCHEMA),
    },
    // PROJECTION_LANE_HELD: with minPosition, the key's lane is held at or before it (the body's `held` names the event).
    errors: ['NOT_FOUND', 'PROJECTION_LANE_HELD'],
  })
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
  @ApiOperation({
    tag: 'projections',
    summary: "The projection's state keys, in key order",
    parameters: { after: { description: "the previous page's next" } },
    responses: { 200: json('a page of keys', KEYS_PAGE_SCHEMA) },
    errors: ['NOT_FOUND'],
  })
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
  @ApiOperation({
    tag: 'projections',
    summary: 'Delete a projection with its versions, state, notifications and deliveries',
    responses: { 204: noContent('deleted') },
    errors: ['NOT_FOUND'],
  })
  async remove(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string): Promise<void> {
    await this.catalog.remove(tenant.tenantId, id);
  }

  @Get(':id/lanes')
  @RequiresScope('state:read')
  @ApiOperation({
    tag: 'projections',
    summary: "The projection's lanes (one per state key), 100 a page",
    parameters: { held: { description: "'true': held lanes only" }, after: { description: 'the last key of the previous page' } },
    responses: { 200: json('a page of lanes', LANES_PAGE_SCHEMA) },
    errors: ['NOT_FOUND'],
  })
  async lanes(
    @CurrentTenant() tenant: TenantRecord,
    @Param('id') id: string,
    @Query('held') held?: string,
    @Query('after') after?: string,
  ) {
    const lanes = await this.reader.lanes(tenant.tenantId, id, { afterKey: after ?? '', limit: LANE_PAGE, heldOnly: held === 'true' });
    const events = await this.reader.heldEvents(tenant.tenantId, lanes);
    return { lanes: lanes.map((l) => laneView(l, events)) };
  }

  @Post(':id/lanes/:key/retry')
  @HttpCode(200)
  @RequiresScope('deploy')
  @ApiOperation({
    tag: 'projections',
    summary: 'Retry the event a held lane stopped on',
    responses: { 200: json('the lane runs again', LANE_OPERATION_RESULT_SCHEMA) },
    errors: ['NOT_FOUND', 'VALIDATION_FAILED'],
  })
  async retry(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string, @Param('key') key: string) {
    return this.laneOperations.operate(tenant.tenantId, id, key, 'retry');
  }

  @Post(':id/lanes/:key/skip')
  @HttpCode(200)
  @RequiresScope('deploy')
  @ApiOperation({
    tag: 'projections',
    summary: 'Skip the event a held lane stopped on',
    responses: { 200: json('the lane goes on after it', LANE_OPERATION_RESULT_SCHEMA) },
    errors: ['NOT_FOUND', 'VALIDATION_FAILED'],
  })
  async skip(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string, @Param('key') key: string) {
    return this.laneOperations.operate(tenant.tenantId, id, key, 'skip');
  }
}
