import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { DtoValidationPipe } from '../common/dto-validation.pipe';
import { ExactPayloads, Quota } from '../common/route-options';
import { TenantRecord } from '../store/tenant-repository.port';
import { CurrentTenant } from '../tenancy/current-tenant.decorator';
import { EventAppender } from './event-appender';
import { AppendBatchDto, AppendEventDto } from './event-input.dto';
import { EventReader } from './event-reader';
import { appendedView, batchAppendedView, storedEventView } from './event-views';

@Controller('events')
export class EventsController {
  constructor(
    private readonly appender: EventAppender,
    private readonly reader: EventReader,
  ) {}

  @Post()
  @HttpCode(201)
  @ExactPayloads()
  @Quota('append')
  async append(@CurrentTenant() tenant: TenantRecord, @Body(new DtoValidationPipe(AppendEventDto)) body: AppendEventDto) {
    return appendedView(await this.appender.appendOne(tenant.tenantId, body));
  }

  @Post('batch')
  @HttpCode(201)
  @ExactPayloads()
  @Quota('append-batch')
  async appendBatch(@CurrentTenant() tenant: TenantRecord, @Body(new DtoValidationPipe(AppendBatchDto)) body: AppendBatchDto) {
    return batchAppendedView(await this.appender.appendBatch(tenant.tenantId, body));
  }

  @Get(':aggregateId')
  async read(
    @CurrentTenant() tenant: TenantRecord,
    @Param('aggregateId') aggregateId: string,
    @Query() query: { fromVersion?: string; limit?: string },
  ) {
    const page = await this.reader.readStream(tenant.tenantId, aggregateId, query);
    return {
      events: page.events.map(storedEventView),
      ...(page.nextFromVersion !== undefined ? { nextFromVersion: page.nextFromVersion } : {}),
    };
  }
}
