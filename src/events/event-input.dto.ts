import { applyDecorators } from '@nestjs/common';
import { JSONSchema } from 'class-validator-jsonschema';
import { IsArray, IsDefined, IsIn, IsInt, IsObject, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import { AGGREGATE_ID_MAX_BYTES, IsAggregateId } from './aggregate-id';
import { AGGREGATE_TYPE_PATTERN, EVENT_TYPE_PATTERN, LIMITS, TRACE_ID_PATTERN } from '../common/event-limits';
import { APPEND_CONDITION_SCHEMA, QUERY_ITEMS_SCHEMA, TAGS_SCHEMA } from './event-query';

/**
 * `tags` and `condition` are only typed here: their rules (limits, duplicates, the query's items) are
 * event-query.ts's parsers, which the appender runs so that `field` names the element (`tags[2]`).
 */
const TagsRules = () => applyDecorators(IsOptional(), IsArray(), JSONSchema(TAGS_SCHEMA));
const ConditionRules = () => applyDecorators(IsOptional(), IsObject(), JSONSchema(APPEND_CONDITION_SCHEMA));
const AggregateIdRules = () =>
  applyDecorators(
    IsString(),
    IsAggregateId(),
    JSONSchema({
      minLength: 1,
      description: `any Unicode text without control characters, at most ${AGGREGATE_ID_MAX_BYTES} bytes of UTF-8, kept exactly as sent (no normalisation)`,
    }),
  );
const AggregateTypeRules = () =>
  applyDecorators(
    IsOptional(),
    IsString(),
    Length(1, LIMITS.aggregateTypeMax),
    Matches(AGGREGATE_TYPE_PATTERN, { message: 'aggregateType must hold only letters, digits and . _ -' }),
  );
const TraceIdRules = (name: string) =>
  applyDecorators(
    IsOptional(),
    IsString(),
    Length(1, LIMITS.correlationIdMax),
    Matches(TRACE_ID_PATTERN, { message: `${name} must be printable ASCII without spaces` }),
  );

/** Fields shared by POST /events and the envelope of POST /events/batch. */
export class EventEnvelopeDto {
  @AggregateIdRules()
  aggregateId!: string;

  @AggregateTypeRules()
  aggregateType?: string;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  expectedVersion?: number;

  @TraceIdRules('correlationId')
  correlationId?: string;

  @TraceIdRules('causationId')
  causationId?: string;

  @IsOptional()
  @IsObject()
  metadata?: Record<string, unknown>;

  @ConditionRules()
  condition?: Record<string, unknown>;
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

  @TagsRules()
  tags?: string[];
}

export class AppendEventDto extends EventEnvelopeDto {
  @EventTypeRules()
  eventType!: string;

  @EventDataRules()
  data!: Record<string, unknown>;

  @TagsRules()
  tags?: string[];
}

export class AppendBatchDto extends EventEnvelopeDto {
  /** Elements are checked one by one against EventBodyDto by the pipe (see NESTED); the schema says so too. */
  @IsArray()
  @JSONSchema((schema, options) => ({ ...schema, items: { $ref: `${options.refPointerPrefix}${EventBodyDto.name}` } }))
  events!: EventBodyDto[];

  static readonly NESTED = { events: EventBodyDto };
}

/** One event of POST /events/transaction: its own aggregate, type, tags and metadata. */
export class TransactionEventDto {
  @AggregateIdRules()
  aggregateId!: string;

  @AggregateTypeRules()
  aggregateType?: string;

  @EventTypeRules()
  eventType!: string;

  @EventDataRules()
  data!: Record<string, unknown>;

  @TagsRules()
  tags?: string[];

  @IsOptional()
  @IsObject()
  @JSONSchema({ description: 'kept with the event; the events of one aggregate in a transaction must carry the same metadata (or none)' })
  metadata?: Record<string, unknown>;
}

/** POST /events/transaction (README "Transactions"): events of up to 100 aggregates, all stored or none. */
export class AppendTransactionDto {
  @IsArray()
  @JSONSchema((schema, options) => ({
    ...schema,
    minItems: 1,
    maxItems: LIMITS.eventsPerBatch,
    items: { $ref: `${options.refPointerPrefix}${TransactionEventDto.name}` },
  }))
  events!: TransactionEventDto[];

  @IsOptional()
  @IsObject()
  @JSONSchema({
    additionalProperties: { type: 'integer', minimum: 0 },
    description: 'aggregateId → the version it must be at (0: must not exist yet); every key an aggregate of `events`',
  })
  expectedVersions?: Record<string, number>;

  @ConditionRules()
  condition?: Record<string, unknown>;

  @TraceIdRules('correlationId')
  correlationId?: string;

  @TraceIdRules('causationId')
  causationId?: string;

  static readonly NESTED = { events: TransactionEventDto };
}

/** POST /events/query: a DCB query and GET /events's paging words. */
export class QueryEventsDto {
  @IsArray()
  @JSONSchema(QUERY_ITEMS_SCHEMA)
  items!: unknown[];

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  @JSONSchema({ description: 'forward: events after this position (default 0: from the start)' })
  afterPosition?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  @JSONSchema({ description: 'direction=backward: events before this position (default: from the head)' })
  beforePosition?: number;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(LIMITS.readPageMax)
  @JSONSchema({ description: `page size (default ${LIMITS.readPageDefault}, at most ${LIMITS.readPageMax})` })
  limit?: number;

  @IsOptional()
  @IsIn(['forward', 'backward'])
  direction?: 'forward' | 'backward';
}
