import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bodyDigestOf } from '../common/body-digest';
import { DtoValidationPipe } from '../common/dto-validation.pipe';
import { IntQueryPipe } from '../common/int-query.pipe';
import { ExactPayloads, LongLived, Quota } from '../common/route-options';
import { TenantRecord } from '../store/tenant-repository.port';
import { CurrentTenant, TenantRequest } from '../tenancy/current-tenant.decorator';
import { KeyInQuery } from '../tenancy/public.decorator';
import { RequiresScope } from '../tenancy/scopes';
import { AggregateIdPipe } from './aggregate-id.pipe';
import { AppendOutcomeWithState } from './append-pipeline';
import { AppendContext, EventAppender, RequestIdempotency } from './event-appender';
import { AppendBatchDto, AppendEventDto } from './event-input.dto';
import { LIMITS } from './event-limits';
import { callerTraceContext } from './trace-context';
import { parseIdempotencyKey } from './idempotency-key';
import { EventReader, StreamPage } from './event-reader';
import { EventStreamSse } from './event-stream.port';
import { appendedView, batchAppendedView, erasedView, logPageView, storedEventView } from './event-views';
import { EventEraser } from './event-eraser';
import { Direction, DirectionPipe, TypeListPipe } from './log-query';

const AGGREGATE_NAMED_STREAM = 'stream';

@Controller('events')
export class EventsController {
  constructor(
    private readonly appender: EventAppender,
    private readonly reader: EventReader,
    private readonly sse: EventStreamSse,
    private readonly eraser: EventEraser,
  ) {}

  @Post()
  @HttpCode(201)
  @ExactPayloads()
  @Quota('append')
  @RequiresScope('events:write')
  async append(
    @CurrentTenant() tenant: TenantRecord,
    @Body(new DtoValidationPipe(AppendEventDto)) body: AppendEventDto,
    @Headers('Idempotency-Key') key: string | undefined,
    @Headers('traceparent') traceparent: string | undefined,
    @Headers('tracestate') tracestate: string | undefined,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    return appendedView(
      replayMarked(reply, await this.appender.appendOne(tenant.tenantId, body, appendContextOf(req, key, traceparent, tracestate))),
    );
  }

  @Post('batch')
  @HttpCode(201)
  @ExactPayloads()
  @Quota('append-batch')
  @RequiresScope('events:write')
  async appendBatch(
    @CurrentTenant() tenant: TenantRecord,
    @Body(new DtoValidationPipe(AppendBatchDto)) body: AppendBatchDto,
    @Headers('Idempotency-Key') key: string | undefined,
    @Headers('traceparent') traceparent: string | undefined,
    @Headers('tracestate') tracestate: string | undefined,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    return batchAppendedView(
      replayMarked(reply, await this.appender.appendBatch(tenant.tenantId, body, appendContextOf(req, key, traceparent, tracestate))),
    );
  }

  /** The tenant's log in position order (README, "Reading the log"). */
  @Get()
  @RequiresScope('events:read')
  async readLog(
    @CurrentTenant() tenant: TenantRecord,
    @Query('afterPosition', new IntQueryPipe('afterPosition', undefined)) afterPosition: number | undefined,
    @Query('beforePosition', new IntQueryPipe('beforePosition', undefined, 1)) beforePosition: number | undefined,
    @Query('direction', DirectionPipe) direction: Direction,
    @Query('limit', new IntQueryPipe('limit', LIMITS.readPageDefault, 1, LIMITS.readPageMax)) limit: number,
    @Query('aggregateType', new TypeListPipe('aggregateType')) aggregateTypes: string[] | undefined,
    @Query('eventType', new TypeListPipe('eventType')) eventTypes: string[] | undefined,
  ) {
    const page = await this.reader.readLog(tenant.tenantId, {
      direction,
      afterPosition,
      beforePosition,
      limit,
      aggregateTypes,
      eventTypes,
    });
    return logPageView(page);
  }

  /**
   * A WebSocket upgrade of this path never gets here (WebSocketStreamServer takes it on the HTTP
   * server's 'upgrade'). With `Accept: text/event-stream`: the log as server-sent events. Any other
   * GET is a read of the aggregate named `stream`, which this static route would otherwise hide.
   */
  @Get('stream')
  @KeyInQuery()
  @LongLived()
  @RequiresScope('events:read')
  async stream(
    @CurrentTenant() tenant: TenantRecord,
    @Query('afterPosition') afterPosition: string | undefined,
    @Query('aggregateType') aggregateType: string | string[] | undefined,
    @Query('eventType') eventType: string | string[] | undefined,
    @Query('fromVersion', new IntQueryPipe('fromVersion', undefined, 1)) fromVersion: number | undefined,
    @Query('beforeVersion', new IntQueryPipe('beforeVersion', undefined, 1)) beforeVersion: number | undefined,
    @Query('direction', DirectionPipe) direction: Direction,
    @Query('limit', new IntQueryPipe('limit', LIMITS.readPageDefault, 1, LIMITS.readPageMax)) limit: number,
    @Headers('accept') accept: string | undefined,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    if (!(accept ?? '').includes('text/event-stream')) {
      const page = await this.readAggregate(tenant.tenantId, AGGREGATE_NAMED_STREAM, direction, fromVersion, beforeVersion, limit);
      await reply.send(page);
      return;
    }
    // The stream writes to the raw response from here on, its refusals included.
    reply.hijack();
    const keyHash = (req as TenantRequest).apiKeyHash!;
    await this.sse.serve(
      req.raw,
      reply.raw,
      { tenantId: tenant.tenantId, keyHash },
      { afterPosition, aggregateType, eventType },
      lastEventId,
    );
  }

  /** Erasure (README "Erasure"): 200 with the tombstone, the same again for an aggregate erased before. */
  @Delete(':aggregateId')
  @HttpCode(200)
  @RequiresScope('events:erase')
  async erase(@CurrentTenant() tenant: TenantRecord, @Param('aggregateId', AggregateIdPipe) aggregateId: string) {
    return erasedView(await this.eraser.erase(tenant.tenantId, aggregateId));
  }

  @Get(':aggregateId')
  @RequiresScope('events:read')
  read(
    @CurrentTenant() tenant: TenantRecord,
    @Param('aggregateId', new AggregateIdPipe()) aggregateId: string,
    @Query('fromVersion', new IntQueryPipe('fromVersion', undefined, 1)) fromVersion: number | undefined,
    @Query('beforeVersion', new IntQueryPipe('beforeVersion', undefined, 1)) beforeVersion: number | undefined,
    @Query('direction', DirectionPipe) direction: Direction,
    @Query('limit', new IntQueryPipe('limit', LIMITS.readPageDefault, 1, LIMITS.readPageMax)) limit: number,
  ) {
    return this.readAggregate(tenant.tenantId, aggregateId, direction, fromVersion, beforeVersion, limit);
  }

  private async readAggregate(
    tenantId: string,
    aggregateId: string,
    direction: Direction,
    fromVersion: number | undefined,
    beforeVersion: number | undefined,
    limit: number,
  ) {
    const page: StreamPage =
      direction === 'backward'
        ? await this.reader.readStreamBackward(tenantId, aggregateId, { fromVersion, beforeVersion, limit })
        : await this.reader.readStream(tenantId, aggregateId, { fromVersion, beforeVersion, limit });
    return {
      events: page.events.map(storedEventView),
      ...(page.nextFromVersion !== undefined ? { nextFromVersion: page.nextFromVersion } : {}),
      ...(page.nextBeforeVersion !== undefined ? { nextBeforeVersion: page.nextBeforeVersion } : {}),
    };
  }
}

/** The key with the digest the body parser recorded (README "Retrying appends safely"). */
/** The request's Idempotency-Key (with the digest of its route and body) and the caller's trace context. */
function appendContextOf(req: FastifyRequest, key?: string, traceparent?: string, tracestate?: string): AppendContext {
  return { idempotency: idempotencyOf(key, req), trace: callerTraceContext(traceparent, tracestate) };
}

function idempotencyOf(header: string | undefined, req: FastifyRequest): RequestIdempotency | undefined {
  const key = parseIdempotencyKey(header);
  return key === undefined ? undefined : { key, requestHash: bodyDigestOf(req) ?? '' };
}

/** A replay is the first answer again, marked as such (Idempotent-Replayed, as Stripe and the draft's examples do). */
function replayMarked(reply: FastifyReply, outcome: AppendOutcomeWithState): AppendOutcomeWithState {
  if (outcome.replayed) void reply.header('Idempotent-Replayed', 'true');
  return outcome;
}
