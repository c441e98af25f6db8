import { Body, Controller, Get, HttpCode, Param, Post, Put, Req } from '@nestjs/common';
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
import { ReducerCatalog } from './reducer-catalog';
import { bindingView, reducerRecordView, stateView } from './reducer-views';
import { BindAggregateTypeDto } from './bind-aggregate-type.dto';
import { RequiresScope } from '../tenancy/scopes';

@Controller('reducers')
export class ReducersController {
  constructor(private readonly catalog: ReducerCatalog) {}

  @Post('upload')
  @HttpCode(202)
  @Quota('upload')
  @RequiresScope('deploy')
  async upload(@CurrentTenant() tenant: TenantRecord, @Req() req: FastifyRequest) {
    return this.catalog.acceptUpload(tenant.tenantId, await readMultipart(req));
  }

  @Get(':id/status')
  @RequiresScope('state:read')
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
  @RequiresScope('deploy')
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
  async get(@CurrentTenant() tenant: TenantRecord, @Param('type', AggregateTypePipe) type: string) {
    const { binding, catchUp } = await this.bindingStatus.read(tenant.tenantId, type);
    return bindingView(binding, catchUp);
  }

  @Get(':type/:id/state')
  @RequiresScope('state:read')
  async state(
    @CurrentTenant() tenant: TenantRecord,
    @Param('type', AggregateTypePipe) type: string,
    @Param('id', new AggregateIdPipe('id')) id: string,
  ) {
    return stateView(await this.keeper.read(tenant.tenantId, type, id));
  }
}
