import { Body, Controller, Get, HttpCode, Param, Post, Put, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { validationFailed } from '../common/domain-error';
import { DtoValidationPipe } from '../common/dto-validation.pipe';
import { readMultipart } from '../common/multipart-upload';
import { Quota } from '../common/route-options';
import { AGGREGATE_TYPE_PATTERN } from '../events/event-limits';
import { TenantRecord } from '../store/tenant-repository.port';
import { CurrentTenant } from '../tenancy/current-tenant.decorator';
import { AggregateBinder } from './aggregate-binder';
import { AggregateStateKeeper } from './aggregate-state-keeper';
import { BindingStatus } from './binding-status';
import { ReducerCatalog } from './reducer-catalog';
import { bindingView, reducerRecordView, stateView } from './reducer-views';
import { BindAggregateTypeDto } from './bind-aggregate-type.dto';

function checkType(type: string): string {
  if (type.length > 100 || !AGGREGATE_TYPE_PATTERN.test(type)) throw validationFailed('type', 'is not a valid aggregate type');
  return type;
}

@Controller('reducers')
export class ReducersController {
  constructor(private readonly catalog: ReducerCatalog) {}

  @Post('upload')
  @HttpCode(202)
  @Quota('upload')
  async upload(@CurrentTenant() tenant: TenantRecord, @Req() req: FastifyRequest) {
    return this.catalog.acceptUpload(tenant.tenantId, await readMultipart(req));
  }

  @Get(':id/status')
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
  ) {}

  @Put(':type')
  async bind(
    @CurrentTenant() tenant: TenantRecord,
    @Param('type') type: string,
    @Body(new DtoValidationPipe(BindAggregateTypeDto, { nonObjectAsEmpty: true })) body: BindAggregateTypeDto,
  ) {
    const b = await this.binder.bind(tenant.tenantId, checkType(type), body.reducerId, body.className);
    return { ...bindingView(b), message: `bound; aggregate state catch-up is in progress for type '${type}'` };
  }

  @Get(':type')
  async get(@CurrentTenant() tenant: TenantRecord, @Param('type') type: string) {
    const { binding, catchUp } = await this.bindingStatus.read(tenant.tenantId, checkType(type));
    return bindingView(binding, catchUp);
  }

  @Get(':type/:id/state')
  async state(@CurrentTenant() tenant: TenantRecord, @Param('type') type: string, @Param('id') id: string) {
    return stateView(await this.keeper.read(tenant.tenantId, checkType(type), id));
  }
}
