import { Body, Controller, Headers, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiOperation, json } from '../common/api-docs';
import { DtoValidationPipe } from '../common/dto-validation.pipe';
import { LIMITS } from '../common/event-limits';
import { ExactPayloads, Quota } from '../common/route-options';
import { TenantRecord } from '../store/tenant-repository.port';
import { CurrentTenant } from '../tenancy/current-tenant.decorator';
import { RequiresScope } from '../tenancy/scopes';
import { APPEND_ERRORS, appendContextOf, IDEMPOTENCY_KEY, replayMarked, TRACE_CONTEXT_HEADERS } from './append-route-words';
import { EventAppender } from './event-appender';
import { AppendTransactionDto, QueryEventsDto } from './event-input.dto';
import { parseQueryItems } from './event-query';
import { EventReader } from './event-reader';
import { LOG_PAGE_SCHEMA, logPageView, TRANSACTION_APPENDED_SCHEMA, transactionAppendedView } from './event-views';

/** The Dynamic Consistency Boundary's routes (docs/dcb.md): reads by query and multi-aggregate transactions. */
@Controller('events')
export class EventsDcbController {
  constructor(
    private readonly appender: EventAppender,
    private readonly reader: EventReader,
  ) {}

  @Post('query')
  @HttpCode(200)
  @RequiresScope('events:read')
  @ApiOperation({
    tag: 'events',
    summary: 'Read the events matching a DCB query, in position order (README "Tags and queries")',
    description:
      "An event matches an item when its type is one of the item's `types` (absent or empty: any) and its tags include all of the " +
      "item's `tags` (absent or empty: any); items are OR-ed. Paging as GET /events: forward answers nextAfterPosition always " +
      '(the last position returned, or afterPosition); backward (beforePosition) answers nextBeforePosition while the page is full.',
    responses: { 200: json('a page of the matching events', LOG_PAGE_SCHEMA) },
    errors: ['VALIDATION_FAILED'],
  })
  async query(@CurrentTenant() tenant: TenantRecord, @Body(new DtoValidationPipe(QueryEventsDto)) body: QueryEventsDto) {
    const items = parseQueryItems(body.items, 'items');
    const page = await this.reader.readLog(tenant.tenantId, {
      direction: body.direction ?? 'forward',
      afterPosition: body.afterPosition ?? undefined,
      beforePosition: body.beforePosition ?? undefined,
      limit: body.limit ?? LIMITS.readPageDefault,
      query: { items },
    });
    return logPageView(page);
  }

  @Post('transaction')
  @HttpCode(201)
  @ExactPayloads()
  @Quota('append-batch')
  @RequiresScope('events:write')
  @ApiOperation({
    tag: 'events',
    summary: 'Append events to several aggregates atomically (all or none), optionally under a DCB condition',
    description:
      "Each aggregate's events are stored contiguously in the order given, aggregates in the order of their first event, so the " +
      'transaction occupies startPosition..endPosition without a gap. 1-1,000 events, at most 100 aggregates; every expectedVersions ' +
      "key must be an aggregate of events; one aggregate's events must agree on aggregateType and metadata. Any failure stores nothing.",
    parameters: { ...IDEMPOTENCY_KEY, ...TRACE_CONTEXT_HEADERS },
    responses: {
      201: json(
        "stored; each aggregate's state when a reducer is bound to its type (a replay: the first answer, Idempotent-Replayed: true)",
        TRANSACTION_APPENDED_SCHEMA,
      ),
    },
    errors: APPEND_ERRORS,
  })
  async appendTransaction(
    @CurrentTenant() tenant: TenantRecord,
    @Body(new DtoValidationPipe(AppendTransactionDto)) body: AppendTransactionDto,
    @Headers('Idempotency-Key') key: string | undefined,
    @Headers('traceparent') traceparent: string | undefined,
    @Headers('tracestate') tracestate: string | undefined,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const context = appendContextOf(req, key, traceparent, tracestate);
    return transactionAppendedView(replayMarked(reply, await this.appender.appendTransaction(tenant.tenantId, body, context)));
  }
}
