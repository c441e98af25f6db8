import { Body, Controller, Get, HttpCode, Param, Post, Put, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { DtoValidationPipe } from '../common/dto-validation.pipe';
import { readMultipart } from '../common/multipart-upload';
import { Quota } from '../common/route-options';
import { AggregateIdPipe } from '../events/aggregate-id.pipe';
import { AggregateTypePipe } from '../events/aggregate-type.pipe';
import { TenantRecord } from '../store/tenant-repository.port';
import { CurrentTenant } from '../tenancy/current-tenant.decorator';
import { AggregateBinder } from './aggregate-binder';
import { AggregateStateKeeper } from './aggregate-state-keeper';
import { BindingStatus } from './binding-status';
import { FailedAggregates } from './failed-aggregates';
import { ReducerCatalog } from './reducer-catalog';
import {
  AGGREGATE_STATE_SCHEMA,
  AGGREGATE_TYPE_LIST_SCHEMA,
  aggregateTypeListView,
  BINDING_SCHEMA,
  bindingView,
  BOUND_SCHEMA,
  FAILED_AGGREGATES_SCHEMA,
  failedPageView,
  REDUCER_LIST_SCHEMA,
  reducerListView,
  REDUCER_RECORD_SCHEMA,
  REDUCER_UPLOAD_ANSWER_SCHEMA,
  reducerRecordView,
  stateView,
} from './reducer-views';
import { BindAggregateTypeDto } from './bind-aggregate-type.dto';
import { RequiresScope } from '../tenancy/scopes';
import { ARCHIVE_ERRORS, ApiOperation, json } from '../common/api-docs';
import { IntQueryPipe } from '../common/int-query.pipe';
import { integer, object, oneOfStrings, string } from '../common/json-schema';
import { SourceValidator, VALIDATE_BODY, VALIDATION_SCHEMA } from '../tenant-code/compiler/source-validator';

/** The paging both listings share: `after` the previous page's `next`, `limit` 1..1000 (100 unless given). */
const LIST_PARAMETERS = {
  after: { description: "the previous page's next" },
  limit: { description: 'at most this many (1..1000, default 100)' },
};

/** The multipart form the upload reads (readMultipart; the document describes it, nothing validates by it). */
const REDUCER_UPLOAD_BODY = object(
  {
    file: string({ contentMediaType: 'application/zip', description: 'zip of .cs sources with at least one reducer implementation' }),
  },
  {
    reducerId: string({ description: 'the id to give the upload (else a UUID)' }),
    autoBind: oneOfStrings(['true', 'false'] as const, {
      description: "'false': compile only, the live binding stays (bind later with PUT /aggregate-types/{type}); default 'true'",
    }),
  },
);

@Controller('reducers')
export class ReducersController {
  constructor(
    private readonly catalog: ReducerCatalog,
    private readonly validator: SourceValidator,
  ) {}

  @Post('validate')
  @HttpCode(200)
  @Quota('upload')
  @RequiresScope('deploy')
  @ApiOperation({
    tag: 'reducers',
    summary: 'Compile and check a reducer archive, binding and storing nothing',
    description:
      'Every diagnostic at once (compiler errors, sandbox refusals, warnings; each with file, line and column). Counts against the upload quota: it costs a compile.',
    body: { contentType: 'multipart/form-data', schema: VALIDATE_BODY },
    responses: { 200: json('the verdict, valid or not', VALIDATION_SCHEMA) },
    errors: [...ARCHIVE_ERRORS, 'RUNTIME_UNAVAILABLE'],
  })
  async validate(@Req() req: FastifyRequest) {
    return this.validator.validate('reducer', (await readMultipart(req)).file);
  }

  @Post('upload')
  @HttpCode(202)
  @Quota('upload')
  @RequiresScope('deploy')
  @ApiOperation({
    tag: 'reducers',
    summary: 'Upload a reducer archive (compiled in the background)',
    body: { contentType: 'multipart/form-data', schema: REDUCER_UPLOAD_BODY },
    responses: { 202: json('accepted, compiling', REDUCER_UPLOAD_ANSWER_SCHEMA) },
    errors: [...ARCHIVE_ERRORS, 'ALREADY_EXISTS'],
  })
  async upload(@CurrentTenant() tenant: TenantRecord, @Req() req: FastifyRequest) {
    return this.catalog.acceptUpload(tenant.tenantId, await readMultipart(req));
  }

  @Get()
  @RequiresScope('state:read')
  @ApiOperation({
    tag: 'reducers',
    summary: "The tenant's reducer uploads with their status, in reducerId order",
    parameters: LIST_PARAMETERS,
    responses: { 200: json('a page of reducer records', REDUCER_LIST_SCHEMA) },
  })
  async list(
    @CurrentTenant() tenant: TenantRecord,
    @Query('after') after: string | undefined,
    @Query('limit', new IntQueryPipe('limit', 100, 1, 1000)) limit: number,
  ) {
    return reducerListView(await this.catalog.list(tenant.tenantId, after ?? '', limit));
  }

  @Get(':id/status')
  @RequiresScope('state:read')
  @ApiOperation({
    tag: 'reducers',
    summary: "A reducer upload's compilation record (current and earlier fields together)",
    responses: { 200: json('the record', REDUCER_RECORD_SCHEMA) },
    errors: ['NOT_FOUND'],
  })
  async status(@CurrentTenant() tenant: TenantRecord, @Param('id') id: string) {
    return reducerRecordView(await this.catalog.status(tenant.tenantId, id));
  }
}

@Controller('aggregate-types')
export class AggregateTypesController {
  constructor(
    private readonly binder: AggregateBinder,
    private readonly keeper: AggregateStateKeeper,
    private readonly bindingStatus: BindingStatus,
    private readonly failed: FailedAggregates,
  ) {}

  @Get()
  @RequiresScope('state:read')
  @ApiOperation({
    tag: 'reducers',
    summary: "The tenant's bound aggregate types, each with its binding, in type order",
    parameters: LIST_PARAMETERS,
    responses: { 200: json('a page of aggregate types', AGGREGATE_TYPE_LIST_SCHEMA) },
  })
  async list(
    @CurrentTenant() tenant: TenantRecord,
    @Query('after') after: string | undefined,
    @Query('limit', new IntQueryPipe('limit', 100, 1, 1000)) limit: number,
  ) {
    return aggregateTypeListView(await this.binder.list(tenant.tenantId, after ?? '', limit));
  }

  @Put(':type')
  @RequiresScope('deploy')
  @ApiOperation({
    tag: 'reducers',
    summary: 'Bind a reducer to an aggregate type (state catch-up starts)',
    responses: { 200: json('bound', BOUND_SCHEMA) },
    errors: ['NOT_FOUND', 'REDUCER_NOT_COMPILED', 'NO_MATCHING_REDUCER'],
  })
  async bind(
    @CurrentTenant() tenant: TenantRecord,
    // Pipes run in parameter order: the body is checked before the type, as it was before this pipe.
    @Body(new DtoValidationPipe(BindAggregateTypeDto, { nonObjectAsEmpty: true })) body: BindAggregateTypeDto,
    @Param('type', AggregateTypePipe) type: string,
  ) {
    const b = await this.binder.bind(tenant.tenantId, type, body.reducerId, body.className);
    return { ...bindingView(b), message: `bound; aggregate state catch-up is in progress for type '${type}'` };
  }

  @Get(':type')
  @RequiresScope('state:read')
  @ApiOperation({
    tag: 'reducers',
    summary: "An aggregate type's binding and its catch-up",
    responses: { 200: json('the binding', BINDING_SCHEMA) },
    errors: ['NOT_FOUND'],
  })
  async get(@CurrentTenant() tenant: TenantRecord, @Param('type', AggregateTypePipe) type: string) {
    const { binding, catchUp } = await this.bindingStatus.read(tenant.tenantId, type);
    return bindingView(binding, catchUp);
  }

  @Get(':type/failed')
  @RequiresScope('state:read')
  @ApiOperation({
    tag: 'reducers',
    summary: 'The aggregates the bound reducer cannot fold (each held at the event it failed on), in id order',
    parameters: {
      after: { description: "the previous page's next" },
      limit: { description: 'at most this many (default 100, at most 1,000)', schema: integer({ minimum: 1, maximum: 1000 }) },
    },
    responses: { 200: json('a page of failed aggregates', FAILED_AGGREGATES_SCHEMA) },
    errors: ['NO_REDUCER_BOUND'],
  })
  async failedAggregates(
    @CurrentTenant() tenant: TenantRecord,
    @Param('type', AggregateTypePipe) type: string,
    @Query('after') after: string | undefined,
    @Query('limit', new IntQueryPipe('limit', 100, 1, 1000)) limit: number,
  ) {
    return failedPageView(await this.failed.page(tenant.tenantId, type, after ?? '', limit));
  }

  @Get(':type/:id/state')
  @RequiresScope('state:read')
  @ApiOperation({
    tag: 'reducers',
    summary: "An aggregate's state, computed by its type's reducer",
    responses: { 200: json('the state', AGGREGATE_STATE_SCHEMA) },
    errors: ['NO_REDUCER_BOUND', 'NOT_FOUND', 'AGGREGATE_ERASED', 'REDUCER_FAILED', 'STATE_TOO_LARGE', 'RUNTIME_UNAVAILABLE'],
  })
  async state(
    @CurrentTenant() tenant: TenantRecord,
    @Param('type', AggregateTypePipe) type: string,
    @Param('id', new AggregateIdPipe('id')) id: string,
  ) {
    return stateView(await this.keeper.read(tenant.tenantId, type, id));
  }
}
