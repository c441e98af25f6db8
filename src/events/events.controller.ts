import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query } from '@nestjs/common';
import { DtoValidationPipe } from '../common/dto-validation.pipe';
import { IntQueryPipe } from '../common/int-query.pipe';
import { ExactPayloads, Quota } from '../common/route-options';
import { TenantRecord } from '../store/tenant-repository.port';
import { CurrentTenant } from '../tenancy/current-tenant.decorator';
import { AggregateIdPipe } from './aggregate-id.pipe';
import { EventAppender } from './event-appender';
import { AppendBatchDto, AppendEventDto } from './event-input.dto';
import { LIMITS } from './event-limits';
import { EventReader } from './event-reader';
import { callerTraceContext } from './trace-context';
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
  async append(
    @CurrentTenant() tenant: TenantRecord,
    @Body(new DtoValidationPipe(AppendEventDto)) body: AppendEventDto,
    @Headers('traceparent') traceparent?: string,
    @Headers('tracestate') tracestate?: string,
  ) {
    return appendedView(await this.appender.appendOne(tenant.tenantId, body, callerTraceContext(traceparent, tracestate)));
  }

  @Post('batch')
  @HttpCode(201)
  @ExactPayloads()
  @Quota('append-batch')
  async appendBatch(
    @CurrentTenant() tenant: TenantRecord,
    @Body(new DtoValidationPipe(AppendBatchDto)) body: AppendBatchDto,
    @Headers('traceparent') traceparent?: string,
    @Headers('tracestate') tracestate?: string,
  ) {
    return batchAppendedView(await this.appender.appendBatch(tenant.tenantId, body, callerTraceContext(traceparent, tracestate)));
  }

  @Get(':aggregateId')
  async read(
    @CurrentTenant() tenant: TenantRecord,
    @Param('aggregateId', new AggregateIdPipe()) aggregateId: string,
    @Query('fromVersion', new IntQueryPipe('fromVersion', 1, 1)) fromVersion: number,
    @Query('limit', new IntQueryPipe('limit', LIMITS.readPageDefault, 1, LIMITS.readPageMax)) limit: number,
  ) {
    const page = await this.reader.readStream(tenant.tenantId, aggregateId, { fromVersion, limit });
    return {
      events: page.events.map(storedEventView),
      ...(page.nextFromVersion !== undefined ? { nextFromVersion: page.nextFromVersion } : {}),
    };
  }
}
