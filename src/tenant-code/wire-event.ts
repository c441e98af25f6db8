import { RawJson, rawJsonOrNull } from '../common/raw-json';
import { isoTime } from '../common/iso-time';
import { StoredEvent } from '../store/event-log.port';
import { WireEvent } from './host/runtime-protocol';

/** An event as the C# contract sees it (data and metadata as their stored JSON text, verbatim). */
export function toWireEvent(
  e: Pick<
    StoredEvent,
    | 'eventId'
    | 'aggregateId'
    | 'aggregateType'
    | 'eventType'
    | 'version'
    | 'timestamp'
    | 'data'
    | 'metadata'
    | 'correlationId'
    | 'causationId'
    | 'tags'
  >,
): WireEvent {
  return {
    eventId: e.eventId,
    aggregateId: e.aggregateId,
    aggregateType: e.aggregateType,
    eventType: e.eventType,
    version: e.version,
    timestamp: isoTime(e.timestamp),
    data: new RawJson(e.data),
    metadata: rawJsonOrNull(e.metadata),
    correlationId: e.correlationId,
    causationId: e.causationId,
    // Only when it has some: the request of an event without tags stays as it was.
    ...(e.tags && e.tags.length > 0 ? { tags: e.tags } : {}),
  };
}
