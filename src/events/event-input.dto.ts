import { applyDecorators } from '@nestjs/common';
import { JSONSchema } from 'class-validator-jsonschema';
import { IsArray, IsDefined, IsInt, IsObject, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import { AGGREGATE_ID_MAX_BYTES, IsAggregateId } from './aggregate-id';
import { AGGREGATE_TYPE_PATTERN, EVENT_TYPE_PATTERN, LIMITS, TRACE_ID_PATTERN } from '../common/event-limits';

/** Fields shared by POST /events and the envelope of POST /events/batch. */
export class EventEnvelopeDto {
  @IsString()
  @IsAggregateId()
  @JSONSchema({
    minLength: 1,
    description: `any Unicode text without control characters, at most ${AGGREGATE_ID_MAX_BYTES} bytes of UTF-8, kept exactly as sent (no normalisation)`,
  })
  aggregateId!: string;

  @IsOptional()
  @IsString()
  @Length(1, LIMITS.aggregateTypeMax)
  @Matches(AGGREGATE_TYPE_PATTERN, { message: 'aggregateType must hold only letters, digits and . _ -' })
  aggregateType?: string;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  expectedVersion?: number;

  @IsOptional()
  @IsString()
  @Length(1, LIMITS.correlationIdMax)
  @Matches(TRACE_ID_PATTERN, { message: 'correlationId must be printable ASCII without spaces' })
  correlationId?: string;

  @IsOptional()
  @IsString()
  @Length(1, LIMITS.correlationIdMax)
  @Matches(TRACE_ID_PATTERN, { message: 'causationId must be printable ASCII without spaces' })
  causationId?: string;

  @IsOptional()
  @IsObject()
  metadata?: Record<string, unknown>;
}

/** The rules of one event's own fields, shared by a single append and a batch element. */
const EventTypeRules = () =>
  applyDecorators(
    IsString(),
    Length(1, LIMITS.eventTypeMax),
    Matches(EVENT_TYPE_PATTERN, { message: 'eventType must start with a letter or digit and hold only letters, digits and . _ : / + -' }),
  );
const EventDataRules = () => applyDecorators(IsDefined(), IsObject());

export class EventBodyDto {
  @EventTypeRules()
  eventType!: string;

  @EventDataRules()
  data!: Record<string, unknown>;
}

export class AppendEventDto extends EventEnvelopeDto {
  @EventTypeRules()
  eventType!: string;

  @EventDataRules()
  data!: Record<string, unknown>;
}

export class AppendBatchDto extends EventEnvelopeDto {
  /** Elements are checked one by one against EventBodyDto by the pipe (see NESTED); the schema says so too. */
  @IsArray()
  @JSONSchema((schema, options) => ({ ...schema, items: { $ref: `${options.refPointerPrefix}${EventBodyDto.name}` } }))
  events!: EventBodyDto[];

  static readonly NESTED = { events: EventBodyDto };
}
