import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bodyDigestOf } from '../common/body-digest';
import { DtoValidationPipe } from '../common/dto-validation.pipe';
import { IntQueryPipe } from '../common/int-query.pipe';
import { ExactPayloads, Quota } from '../common/route-options';
import { TenantRecord } from '../store/tenant-repository.port';
import { CurrentTenant } from '../tenancy/current-tenant.decorator';
import { AggregateIdPipe } from './aggregate-id.pipe';
import { AppendOutcomeWithState } from './append-pipeline';
import { AppendContext, EventAppender, RequestIdempotency } from './event-appender';
import { AppendBatchDto, AppendEventDto } from './event-input.dto';
import { LIMITS } from './event-limits';
import { EventReader } from './event-reader';
import { callerTraceContext } from './trace-context';
import { appendedView, batchAppendedView, storedEventView } from './event-views';
import { parseIdempotencyKey } from './idempotency-key';
import { RequiresScope } from '../tenancy/scopes';

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
  @RequiresScope('events:write')
  async append(
    @CurrentTenant() tenant: TenantRecord,
    @Body(new DtoValidationPipe(AppendEventDto)) body: AppendEventDto,
    @Headers() headers: Record<string, string | string[] | undefined>,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    return appendedView(replayMarked(reply, await this.appender.appendOne(tenant.tenantId, body, appendContextOf(headers, req))));
  }

  @Post('batch')
  @HttpCode(201)
  @ExactPayloads()
  @Quota('append-batch')
  @RequiresScope('events:write')
  async appendBatch(
    @CurrentTenant() tenant: TenantRecord,
    @Body(new DtoValidationPipe(AppendBatchDto)) body: AppendBatchDto,
    @Headers() headers: Record<string, string | string[] | undefined>,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    return batchAppendedView(replayMarked(reply, await this.appender.appendBatch(tenant.tenantId, body, appendContextOf(headers, req))));
  }

  @Get(':aggregateId')
  @RequiresScope('events:read')
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

/** The key with the digest the body parser recorded (README "Retrying appends safely"). */
/** The request's Idempotency-Key (with the digest of its route and body) and the caller's trace context. */
function appendContextOf(headers: Record<string, string | string[] | undefined>, req: FastifyRequest): AppendContext {
  return {
    idempotency: idempotencyOf(headers['idempotency-key'], req),
    trace: callerTraceContext(headers.traceparent, headers.tracestate),
  };
}

function idempotencyOf(header: string | string[] | undefined, req: FastifyRequest): RequestIdempotency | undefined {
  // Node joins a repeated header into one string, which the key's syntax refuses (400).
  const key = parseIdempotencyKey(Array.isArray(header) ? header.join(', ') : header);
  return key === undefined ? undefined : { key, requestHash: bodyDigestOf(req) ?? '' };
}

/** A replay is the first answer again, marked as such (Idempotent-Replayed, as Stripe and the draft's examples do). */
function replayMarked(reply: FastifyReply, outcome: AppendOutcomeWithState): AppendOutcomeWithState {
  if (outcome.replayed) void reply.header('Idempotent-Replayed', 'true');
  return outcome;
}
