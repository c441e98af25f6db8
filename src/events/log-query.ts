import { PipeTransform } from '@nestjs/common';
import { validationFailed } from '../common/domain-error';
import { LOG_FILTER_MAX_VALUES } from '../store/event-log-schema';
import { AGGREGATE_TYPE_PATTERN, EVENT_TYPE_PATTERN, LIMITS } from '../common/event-limits';
import { EventQuery } from '../store/event-log.port';
import { parseEventQueryParam } from './event-query';

/**
 * The query words of the tenant's log (GET /events, GET /events/stream): the filters (the type lists
 * and the DCB `query`, AND-ed) and the direction. Plain functions, so the stream transports (notifications/streams, which check their
 * query themselves on the upgrade) parse exactly as the HTTP routes do.
 */
export interface LogFilters {
  aggregateTypes?: string[];
  eventTypes?: string[];
  /** The DCB query (docs/dcb.md), on top of the type lists: an event must match both. */
  query?: EventQuery;
}

export type Direction = 'forward' | 'backward';

/**
 * `a,b,c`: each value a valid aggregate type (event type), at most LOG_FILTER_MAX_VALUES of them.
 * Absent: no filter. Given but empty (`aggregateType=`) is refused rather than read as "all": a
 * client that built an empty list by mistake would otherwise get the whole log.
 */
export function parseTypeList(field: 'aggregateType' | 'eventType', raw: string | string[] | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  // Given more than once (`eventType=A&eventType=B`): one list, as `eventType=A,B`.
  const values = (Array.isArray(raw) ? raw.join(',') : String(raw)).split(',');
  if (values.length > LOG_FILTER_MAX_VALUES) throw validationFailed(field, `at most ${LOG_FILTER_MAX_VALUES} comma-separated values`);
  const [pattern, max] =
    field === 'aggregateType' ? [AGGREGATE_TYPE_PATTERN, LIMITS.aggregateTypeMax] : [EVENT_TYPE_PATTERN, LIMITS.eventTypeMax];
  for (const v of values) {
    if (v === '' || v.length > max || !pattern.test(v)) throw validationFailed(field, `'${v.slice(0, 50)}' is not a valid ${field}`);
  }
  return [...new Set(values)];
}

export function parseLogFilters(q: {
  aggregateType?: string | string[];
  eventType?: string | string[];
  query?: string | string[];
}): LogFilters {
  const aggregateTypes = parseTypeList('aggregateType', q.aggregateType);
  const eventTypes = parseTypeList('eventType', q.eventType);
  // `query=<URL-encoded JSON {"items":[…]}>`: VALIDATION_FAILED names the element (`query.items[0].tags[1]`).
  const query = parseEventQueryParam(q.query, 'query');
  return { ...(aggregateTypes ? { aggregateTypes } : {}), ...(eventTypes ? { eventTypes } : {}), ...(query ? { query } : {}) };
}

export function parseDirection(raw: string | string[] | undefined): Direction {
  if (raw === undefined || raw === '' || raw === 'forward') return 'forward';
  if (raw === 'backward') return 'backward';
  throw validationFailed('direction', "must be 'forward' or 'backward'");
}

/** `aggregateType` / `eventType` as a route's query parameter (VALIDATION_FAILED before the handler runs). */
export class TypeListPipe implements PipeTransform<string | string[] | undefined, string[] | undefined> {
  constructor(readonly name: 'aggregateType' | 'eventType') {}
  transform(raw: string | string[] | undefined): string[] | undefined {
    return parseTypeList(this.name, raw);
  }
}

/** `query` as a route's query parameter: the URL-encoded JSON of a DCB query (VALIDATION_FAILED before the handler runs). */
export class EventQueryParamPipe implements PipeTransform<string | string[] | undefined, EventQuery | undefined> {
  transform(raw: string | string[] | undefined): EventQuery | undefined {
    return parseEventQueryParam(raw, 'query');
  }
}

export class DirectionPipe implements PipeTransform<string | string[] | undefined, Direction> {
  transform(raw: string | string[] | undefined): Direction {
    return parseDirection(raw);
  }
}
