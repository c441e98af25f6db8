import { Controller, Get, HttpCode, Param, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ARCHIVE_ERRORS, ApiOperation, json } from '../common/api-docs';
import { integer, object, string } from '../common/json-schema';
import { readMultipart } from '../common/multipart-upload';
import { Quota } from '../common/route-options';
import { AggregateTypePipe } from '../events/aggregate-type.pipe';
import { TenantRecord } from '../store/tenant-repository.port';
import { CurrentTenant } from '../tenancy/current-tenant.decorator';
import { RequiresScope } from '../tenancy/scopes';
import { DRY_RUN_ACCEPTED_SCHEMA, DRY_RUN_STATUS_SCHEMA } from './dry-run-views';
import { DryRuns } from './dry-runs';

/** The multipart form a dry run reads (readMultipart; the document describes it, nothing validates by it). */
const DRY_RUN_BODY = object(
  { file: string({ contentMediaType: 'application/zip', description: 'zip of the candidate .cs sources (as an upload)' }) },
  {
    className: string({ description: 'the candidate class (default: the one implementation that fits)' }),
    maxEvents: integer({ description: 'read at most this many events (at most DRY_RUN_MAX_EVENTS, the default)' }),
    fromPosition: integer({ description: 'first position read (default 1)' }),
    toPosition: integer({ description: "last position read (default: the tenant's head at the start)" }),
    keys: string({ description: 'only these keys (a reducer: aggregate ids): a JSON array or a comma-separated list' }),
    sampleKeys: integer({ description: 'only the first this many keys met in the log' }),
  },
);

const DESCRIPTION =
  "Compiles the candidate (storing, binding and promoting nothing) and runs it over the tenant's history in memory, " +
  'notifying nobody, then compares its states with the live ones. Answered at once; the run is read by its id. ' +
  'One dry run per tenant at a time; kept on the instance that ran it for DRY_RUN_KEEP_MS.';

@Controller('projections')
export class ProjectionDryRunsController {
  constructor(private readonly dryRuns: DryRuns) {}

  @Post(':id/dry-run')
  @HttpCode(202)
  @Quota('upload')
  @RequiresScope('deploy')
  @ApiOperation({
    tag: 'projections',
    summary: 'Dry-run a candidate projection over the history, against the active version',
    description: DESCRIPTION,
    body: { contentType: 'multipart/form-data', schema: DRY_RUN_BODY },
    responses: { 202: json('running; poll GET /projections/{id}/dry-runs/{dryRunId}', DRY_RUN_ACCEPTED_SCHEMA) },
    errors: [...ARCHIVE_ERRORS, 'NOT_FOUND', 'DRY_RUN_RUNNING'],
  })
  async start(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string, @Req() req: FastifyRequest) {
    return this.dryRuns.startProjection(tenant.tenantId, id, await readMultipart(req));
  }

  @Get(':id/dry-runs/:dryRunId')
  @RequiresScope('state:read')
  @ApiOperation({
    tag: 'projections',
    summary: 'A projection dry run: its progress, then its report',
    responses: { 200: json('the run', DRY_RUN_STATUS_SCHEMA) },
    errors: ['NOT_FOUND'],
  })
  status(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string, @Param('dryRunId') dryRunId: string) {
    return this.dryRuns.status(tenant.tenantId, 'projection', id, dryRunId);
  }
}

@Controller('aggregate-types')
export class ReducerDryRunsController {
  constructor(private readonly dryRuns: DryRuns) {}

  @Post(':type/dry-run')
  @HttpCode(202)
  @Quota('upload')
  @RequiresScope('deploy')
  @ApiOperation({
    tag: 'reducers',
    summary: "Dry-run a candidate reducer over the type's aggregates, against the bound reducer",
    description: DESCRIPTION,
    body: { contentType: 'multipart/form-data', schema: DRY_RUN_BODY },
    responses: { 202: json('running; poll GET /aggregate-types/{type}/dry-runs/{dryRunId}', DRY_RUN_ACCEPTED_SCHEMA) },
    errors: [...ARCHIVE_ERRORS, 'DRY_RUN_RUNNING'],
  })
  async start(@CurrentTenant() tenant: TenantRecord, @Param('type', AggregateTypePipe) type: string, @Req() req: FastifyRequest) {
    return this.dryRuns.startReducer(tenant.tenantId, type, await readMultipart(req));
  }

  @Get(':type/dry-runs/:dryRunId')
  @RequiresScope('state:read')
  @ApiOperation({
    tag: 'reducers',
    summary: 'A reducer dry run: its progress, then its report',
    responses: { 200: json('the run', DRY_RUN_STATUS_SCHEMA) },
    errors: ['NOT_FOUND'],
  })
  status(@CurrentTenant() tenant: TenantRecord, @Param('type', AggregateTypePipe) type: string, @Param('dryRunId') dryRunId: string) {
    return this.dryRuns.status(tenant.tenantId, 'reducer', type, dryRunId);
  }
}
