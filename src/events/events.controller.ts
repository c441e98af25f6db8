import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DtoValidationPipe } from '../common/dto-validation.pipe';
import { IntQueryPipe } from '../common/int-query.pipe';
import { ExactPayloads, LongLived, Quota } from '../common/route-options';
import { TenantRecord } from '../store/tenant-repository.port';
import { CurrentTenant, TenantRequest } from '../tenancy/current-tenant.decorator';
import { KeyInQuery } from '../tenancy/public.decorator';
import { EventQuery } from '../store/event-log.port';
import { RequiresScope } from '../tenancy/scopes';
import { AggregateIdPipe } from './aggregate-id.pipe';
import { EventAppender } from './event-appender';
import { AppendBatchDto, AppendEventDto } from './event-input.dto';
import { LIMITS } from '../common/event-limits';
import { APPEND_ERRORS, appendContextOf, IDEMPOTENCY_KEY, replayMarked, TRACE_CONTEXT_HEADERS } from './append-route-words';
import { EventReader, StreamPage } from './event-reader';
import { EventStreamSse } from './event-stream.port';
import {
  APPENDED_SCHEMA,
  appendedView,
  BATCH_APPENDED_SCHEMA,
  batchAppendedView,
  ERASED_SCHEMA,
  erasedView,
  EVENT_STREAM_MESSAGE_SCHEMA,
  LOG_PAGE_SCHEMA,
  logPageView,
  STORED_EVENTS_PAGE_SCHEMA,
  storedEventView,
} from './event-views';
import { EventEraser } from './event-eraser';
import { Direction, DirectionPipe, EventQueryParamPipe, TypeListPipe } from './log-query';
import { ApiOperation, json } from '../common/api-docs';
import { integer, string } from '../common/json-schema';

const DIRECTION = { direction: { description: 'forward (default) or backward', schema: { enum: ['forward', 'backward'] } } };
const LOG_FILTERS = {
  aggregateType: { description: 'only these aggregate types: a comma-separated list of up to 20', schema: string() },
  eventType: { description: 'only these event types: a comma-separated list of up to 20', schema: string() },
  query: {
    description:
      'only events matching this DCB query (docs/dcb.md), AND-ed with aggregateType/eventType: the URL-encoded JSON ' +
      '`{"items":[{"types":[…],"tags":[…]}]}` (1-20 items, OR-ed; in an item any of the types and all of the tags; ' +
      'up to 20 of each). A bad query: 400 VALIDATION_FAILED, `field` naming the element (e.g. query.items[0].tags[1])',
    schema: string(),
  },
};
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
  @ApiOperation({
    tag: 'events',
    summary: 'Append one event',
    parameters: { ...IDEMPOTENCY_KEY, ...TRACE_CONTEXT_HEADERS },
    responses: {
      201: json(
        'appended; state when a reducer is bound to the type (a replay: the first answer, Idempotent-Replayed: true)',
        APPENDED_SCHEMA,
      ),
    },
    errors: APPEND_ERRORS,
  })
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
  @ApiOperation({
    tag: 'events',
    summary: 'Append several events to one aggregate atomically (all or none)',
    parameters: { ...IDEMPOTENCY_KEY, ...TRACE_CONTEXT_HEADERS },
    responses: { 201: json('appended (a replay: the first answer, Idempotent-Replayed: true)', BATCH_APPENDED_SCHEMA) },
    errors: APPEND_ERRORS,
  })
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
  @ApiOperation({
    tag: 'events',
    summary: 'Read the tenant\'s log in position order (README, "Reading the log")',
    parameters: {
      afterPosition: { description: 'forward: events after this position (default 0: from the start)' },
      beforePosition: { description: 'direction=backward: events before this position (default: from the head)' },
      ...DIRECTION,
      limit: { description: 'page size (default 1,000, at most 10,000)' },
      ...LOG_FILTERS,
    },
    responses: { 200: json('a page of the log; nextAfterPosition (forward) / nextBeforePosition (backward) to go on', LOG_PAGE_SCHEMA) },
    errors: ['VALIDATION_FAILED'],
  })
  async readLog(
    @CurrentTenant() tenant: TenantRecord,
    @Query('afterPosition', new IntQueryPipe('afterPosition', undefined)) afterPosition: number | undefined,
    @Query('beforePosition', new IntQueryPipe('beforePosition', undefined, 1)) beforePosition: number | undefined,
    @Query('direction', DirectionPipe) direction: Direction,
    @Query('limit', new IntQueryPipe('limit', LIMITS.readPageDefault, 1, LIMITS.readPageMax)) limit: number,
    @Query('aggregateType', new TypeListPipe('aggregateType')) aggregateTypes: string[] | undefined,
    @Query('eventType', new TypeListPipe('eventType')) eventTypes: string[] | undefined,
    @Query('query', EventQueryParamPipe) query: EventQuery | undefined,
  ) {
    const page = await this.reader.readLog(tenant.tenantId, {
      direction,
      afterPosition,
      beforePosition,
      limit,
      aggregateTypes,
      eventTypes,
      query,
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
  @ApiOperation({
    tag: 'events',
    summary: "Follow the tenant's log live: a WebSocket upgrade, or server-sent events",
    description:
      'With `Upgrade: websocket` (the key in X-API-Key, `?apiKey=` or the subprotocol `apikey.<key>`): 101, then one ' +
      "`{type: 'event', …}` message (EventStreamMessage) per event after afterPosition (absent: from the head), then live; " +
      "`{type: 'ping'}` keepalives to answer with `{type: 'pong'}`. With `Accept: text/event-stream`: server-sent events, one " +
      '`event` per event, its position as the id (Last-Event-ID resumes). Any other GET reads the aggregate named `stream` ' +
      '(as GET /events/{aggregateId}, with its parameters).',
    parameters: {
      afterPosition: { description: 'start after this position (absent: the head, live events only)', schema: integer({ minimum: 0 }) },
      ...LOG_FILTERS,
      'last-event-id': { description: 'SSE: the id (position) of the last event received; wins over afterPosition' },
      fromVersion: { description: 'the aggregate `stream` only' },
      beforeVersion: { description: 'the aggregate `stream` only' },
      ...DIRECTION,
      limit: { description: 'the aggregate `stream` only' },
    },
    responses: {
      101: { description: 'WebSocket: switching protocols; messages are EventStreamMessage', schema: EVENT_STREAM_MESSAGE_SCHEMA },
      200: {
        description: 'server-sent events (each data an EventStreamMessage); without Accept: text/event-stream, the aggregate `stream`',
        contentType: 'text/event-stream',
        schema: string(),
      },
    },
    errors: ['VALIDATION_FAILED', 'TOO_MANY_STREAMS'],
  })
  async stream(
    @CurrentTenant() tenant: TenantRecord,
    @Query('afterPosition') afterPosition: string | undefined,
    @Query('aggregateType') aggregateType: string | string[] | undefined,
    @Query('eventType') eventType: string | string[] | undefined,
    @Query('query') query: string | string[] | undefined,
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
      { afterPosition, aggregateType, eventType, query },
      lastEventId,
    );
  }

  /** Erasure (README "Erasure"): 200 with the tombstone, the same again for an aggregate erased before. */
  @Delete(':aggregateId')
  @HttpCode(200)
  @RequiresScope('events:erase')
  @ApiOperation({
    tag: 'events',
    summary: 'Erase an aggregate for good: its events\' data and metadata, its state, the notifications they caused (README "Erasure")',
    description:
      'Keeps each event as a tombstone (eventId, version, position, eventType, timestamp; data {} and erasedAt on reads) and appends ' +
      'a $erased event (aggregate type $system, stream $erasures) in the same transaction. Its state read and further appends ' +
      'then answer 410 AGGREGATE_ERASED. Erasing again answers 200 with the first erasure. Scope events:erase.',
    responses: { 200: json('erased (or erased before: the same answer)', ERASED_SCHEMA) },
    errors: ['NOT_FOUND', 'RESERVED_NAME'],
  })
  async erase(@CurrentTenant() tenant: TenantRecord, @Param('aggregateId', AggregateIdPipe) aggregateId: string) {
    return erasedView(await this.eraser.erase(tenant.tenantId, aggregateId));
  }

  @Get(':aggregateId')
  @RequiresScope('events:read')
  @ApiOperation({
    tag: 'events',
    summary: "Read an aggregate's events, in version order (or newest first with direction=backward)",
    parameters: {
      fromVersion: { description: 'first version to return (forward only; default 1)' },
      beforeVersion: { description: 'direction=backward: versions below this one (default: from the last)' },
      ...DIRECTION,
      limit: { description: 'page size' },
    },
    responses: { 200: json('a page of the stream (empty for an unknown aggregate)', STORED_EVENTS_PAGE_SCHEMA) },
    errors: ['VALIDATION_FAILED'],
  })
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
