import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { DomainError, validationFailed } from '../common/domain-error';
import { payloadText } from '../common/json-source-text';
import { AppendRequest, NewEvent } from '../store/event-log.port';
import { AppendPipeline } from './append-pipeline';
import { AppendOutcomeWithState } from './stateful-append.port';
import { AppendBatchDto, AppendEventDto, AppendTransactionDto, EventEnvelopeDto } from './event-input.dto';
import { parseAppendCondition, parseEventTags } from './event-query';
import { transactionRequests } from './transaction-requests';
import { inferAggregateType, jsonDepthExceeds, LIMITS } from '../common/event-limits';
import { CallerTraceContext } from './trace-context';

/** A request's Idempotency-Key (checked) and the digest of its route and body. */
export interface RequestIdempotency {
  key: string;
  requestHash: string;
}

/** What a request adds to its events beside its body. */
export interface AppendContext {
  idempotency?: RequestIdempotency;
  trace?: CallerTraceContext;
}

/** Turns validated input into append requests (payloads checked for size and depth, then encoded once) and hands them to group commit. */
@Injectable()
export class EventAppender {
  /** How long an idempotency key is remembered (IDEMPOTENCY_KEYS_KEEP_MS). */
  private readonly idempotencyKeepMs: number;
  private readonly now: () => number = Date.now;

  constructor(
    private readonly pipeline: AppendPipeline,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.idempotencyKeepMs = config.idempotency.keepMs;
  }

  /** The request's own context: its Idempotency-Key, and the caller's W3C trace context (stored with the events). */
  appendOne(tenantId: string, input: AppendEventDto, context: AppendContext = {}): Promise<AppendOutcomeWithState> {
    const event = encodeEvent(input.eventType, input.data, 'data', input.tags, 'tags');
    return this.pipeline.append(this.keyed(toRequest(tenantId, input, [event], context.trace ?? {}), context.idempotency));
  }

  appendBatch(tenantId: string, input: AppendBatchDto, context: AppendContext = {}): Promise<AppendOutcomeWithState> {
    if (input.events.length === 0) throw validationFailed('events', 'must hold at least one event');
    if (input.events.length > LIMITS.eventsPerBatch) {
      throw validationFailed('events', `must hold at most ${LIMITS.eventsPerBatch} events`);
    }
    const events = input.events.map((e, i) => encodeEvent(e.eventType, e.data, `events[${i}].data`, e.tags, `events[${i}].tags`));
    return this.pipeline.append(this.keyed(toRequest(tenantId, input, events, context.trace ?? {}), context.idempotency));
  }

  /**
   * POST /events/transaction: one request per aggregate (transaction-requests.ts), all stored or
   * none; the Idempotency-Key rides on the first member and spans the whole transaction.
   */
  appendTransaction(tenantId: string, input: AppendTransactionDto, context: AppendContext = {}): Promise<AppendOutcomeWithState[]> {
    if (input.events.length === 0) throw validationFailed('events', 'must hold at least one event');
    if (input.events.length > LIMITS.eventsPerBatch) {
      throw validationFailed('events', `must hold at most ${LIMITS.eventsPerBatch} events`);
    }
    const requests = transactionRequests(tenantId, {
      events: input.events.map((e, i) => ({
        aggregateId: e.aggregateId,
        aggregateType: e.aggregateType ?? undefined,
        event: encodeEvent(e.eventType, e.data, `events[${i}].data`, e.tags, `events[${i}].tags`),
        metadata: e.metadata == null ? undefined : encodeJson(e.metadata, `events[${i}].metadata`, LIMITS.metadataBytes),
      })),
      expectedVersions: input.expectedVersions ?? undefined,
      condition: parseAppendCondition(input.condition ?? undefined),
      correlationId: input.correlationId ?? undefined,
      causationId: input.causationId ?? undefined,
      ...(context.trace ?? {}),
    });
    requests[0] = this.keyed(requests[0], context.idempotency);
    return this.pipeline.appendTransaction(requests);
  }

  private keyed(request: AppendRequest, idempotency: RequestIdempotency | undefined): AppendRequest {
    if (!idempotency) return request;
    return { ...request, idempotency: { ...idempotency, notBefore: this.now() - this.idempotencyKeepMs } };
  }
}

function toRequest(tenantId: string, input: EventEnvelopeDto, events: NewEvent[], trace: CallerTraceContext): AppendRequest {
  return {
    tenantId,
    aggregateId: input.aggregateId,
    aggregateType: input.aggregateType ?? undefined,
    inferredType: inferAggregateType(input.aggregateId),
    expectedVersion: input.expectedVersion ?? undefined,
    events,
    correlationId: input.correlationId ?? undefined,
    causationId: input.causationId ?? undefined,
    metadata: input.metadata == null ? undefined : encodeJson(input.metadata, 'metadata', LIMITS.metadataBytes),
    ...trace,
    ...conditionOf(input.condition),
  };
}

function conditionOf(value: unknown): Pick<AppendRequest, 'condition'> {
  const condition = parseAppendCondition(value ?? undefined);
  return condition ? { condition } : {};
}

/** Tags only when there are some: a request without them is the request it was before tags. */
function encodeEvent(eventType: string, data: Record<string, unknown>, field: string, rawTags: unknown, tagsField: string): NewEvent {
  const tags = parseEventTags(rawTags ?? undefined, tagsField);
  const event: NewEvent = { eventType, data: encodeJson(data, field, LIMITS.eventDataBytes) };
  if (tags) event.tags = tags;
  return event;
}

function encodeJson(value: unknown, field: string, maxBytes: number): string {
  if (jsonDepthExceeds(value, LIMITS.jsonDepth)) {
    throw validationFailed(field, `is nested deeper than ${LIMITS.jsonDepth} levels`);
  }
  // The client's own text (compacted) when the body parser kept it: JSON.stringify of the parsed value
  // would change numbers and the order of integer-like keys. The parsed value is only validated.
  const text = payloadText(value);
  // Quick reject by string length (a UTF-16 unit encodes to ≥ 1 byte) before counting bytes.
  if (text.length > maxBytes || Buffer.byteLength(text, 'utf8') > maxBytes) {
    throw new DomainError('PAYLOAD_TOO_LARGE', `${field} is larger than ${maxBytes} bytes`, { field, limit: maxBytes });
  }
  return text;
}
