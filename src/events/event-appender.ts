import { DomainError, validationFailed } from '../common/domain-error';
import { payloadText } from '../common/json-source-text';
import { AppendRequest, NewEvent } from '../store/event-log.port';
import { AppendOutcomeWithState, AppendPipeline } from './append-pipeline';
import { AppendBatchDto, AppendEventDto, EventEnvelopeDto } from './event-input.dto';
import { inferAggregateType, jsonDepthExceeds, LIMITS } from './event-limits';
import { CallerTraceContext } from './trace-context';

/** Turns validated input into append requests (payloads checked for size and depth, then encoded once) and hands them to group commit. */
export class EventAppender {
  constructor(private readonly pipeline: AppendPipeline) {}

  appendOne(tenantId: string, input: AppendEventDto, trace: CallerTraceContext = {}): Promise<AppendOutcomeWithState> {
    const event = encodeEvent(input.eventType, input.data, 'data');
    return this.pipeline.append(toRequest(tenantId, input, [event], trace));
  }

  appendBatch(tenantId: string, input: AppendBatchDto, trace: CallerTraceContext = {}): Promise<AppendOutcomeWithState> {
    if (input.events.length === 0) throw validationFailed('events', 'must hold at least one event');
    if (input.events.length > LIMITS.eventsPerBatch) {
      throw validationFailed('events', `must hold at most ${LIMITS.eventsPerBatch} events`);
    }
    const events = input.events.map((e, i) => encodeEvent(e.eventType, e.data, `events[${i}].data`));
    return this.pipeline.append(toRequest(tenantId, input, events, trace));
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
  };
}

function encodeEvent(eventType: string, data: Record<string, unknown>, field: string): NewEvent {
  return { eventType, data: encodeJson(data, field, LIMITS.eventDataBytes) };
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
