import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
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
import { appendedView, batchAppendedView, erasedView, storedEventView } from './event-views';
import { EventEraser } from './event-eraser';
import { RequiresScope } from '../tenancy/scopes';

@Controller('events')
export class EventsController {
  constructor(
    private readonly appender: EventAppender,
    private readonly reader: EventReader,
    private readonly eraser: EventEraser,
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

  /** Erasure (README "Erasure"): 200 with the tombstone, the same again for an aggregate erased before. */
  @Delete(':aggregateId')
  @HttpCode(200)
  @RequiresScope('events:erase')
  async erase(@CurrentTenant() tenant: TenantRecord, @Param('aggregateId', AggregateIdPipe) aggregateId: string) {
    return erasedView(await this.eraser.erase(tenant.tenantId, aggregateId));
  }

  @Get(':aggregateId')
  async read(
    @CurrentTenant() tenant: TenantRecord,
    @Param('aggregateId', AggregateIdPipe) aggregateId: string,
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
