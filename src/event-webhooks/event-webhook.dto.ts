import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsDefined,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Max,
  Min,
  ValidateIf,
} from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { EVENT_QUERY_SCHEMA } from '../events/event-query';
import { LIMITS } from '../common/event-limits';

/** Types one filter may list: a connector names what it wants; a longer list is a sign of a missing aggregate type. */
export const MAX_FILTER_TYPES = 20;
export const MAX_WEBHOOK_NAME = 200;

/**
 * Body of POST /event-webhooks. `afterPosition` absent: from the tenant's head at creation (only
 * events appended later); 0: the whole log. A filter absent or null: every type; present, a list
 * of 1 to 20 types. `query` (DCB, docs/dcb.md) absent or null: no query filter; present, AND-ed
 * with the type lists (only typed here: event-query.ts's parser checks it, naming the element).
 */
export class CreateEventWebhookDto {
  @IsDefined({ message: 'url is required' })
  @IsString({ message: 'url must be a string' })
  url!: string;

  @ValidateIf((o: { afterPosition?: unknown }) => o.afterPosition !== undefined)
  @IsInt({ message: 'afterPosition must be a non-negative integer' })
  @Min(0, { message: 'afterPosition must be a non-negative integer' })
  @Max(Number.MAX_SAFE_INTEGER, { message: `afterPosition must be at most ${Number.MAX_SAFE_INTEGER}` })
  afterPosition?: number;

  @IsOptional()
  @IsArray({ message: 'aggregateTypes must be an array of aggregate types' })
  @ArrayMinSize(1, { message: 'aggregateTypes must name at least one type (leave it out for every type)' })
  @ArrayMaxSize(MAX_FILTER_TYPES, { message: `aggregateTypes may name at most ${MAX_FILTER_TYPES} types` })
  @IsString({ each: true, message: 'aggregateTypes must hold strings' })
  @Length(1, LIMITS.aggregateTypeMax, { each: true, message: `each aggregate type must be 1 to ${LIMITS.aggregateTypeMax} characters` })
  aggregateTypes?: string[] | null;

  @IsOptional()
  @IsArray({ message: 'eventTypes must be an array of event types' })
  @ArrayMinSize(1, { message: 'eventTypes must name at least one type (leave it out for every type)' })
  @ArrayMaxSize(MAX_FILTER_TYPES, { message: `eventTypes may name at most ${MAX_FILTER_TYPES} types` })
  @IsString({ each: true, message: 'eventTypes must hold strings' })
  @Length(1, LIMITS.eventTypeMax, { each: true, message: `each event type must be 1 to ${LIMITS.eventTypeMax} characters` })
  eventTypes?: string[] | null;

  @IsOptional()
  @IsObject({ message: 'query must be a DCB query {"items":[…]}' })
  @JSONSchema({ ...EVENT_QUERY_SCHEMA, description: 'only events matching this DCB query (docs/dcb.md), AND-ed with the type lists' })
  query?: unknown;

  @IsOptional()
  @IsString({ message: 'name must be a string' })
  @Length(1, MAX_WEBHOOK_NAME, { message: `name must be 1 to ${MAX_WEBHOOK_NAME} characters` })
  name?: string | null;
}

/** Body of POST /event-webhooks/{id}/replay: deliver again every matching event from `fromPosition` on. */
export class ReplayEventWebhookDto {
  @IsDefined({ message: 'fromPosition is required' })
  @IsInt({ message: 'fromPosition must be a positive integer' })
  @Min(1, { message: 'fromPosition must be a positive integer' })
  @Max(Number.MAX_SAFE_INTEGER, { message: `fromPosition must be at most ${Number.MAX_SAFE_INTEGER}` })
  fromPosition!: number;
}
