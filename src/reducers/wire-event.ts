import { isoTime } from '../common/iso-time';
import { StoredEvent } from '../store/event-log.port';
import { WireEvent } from '../runtime/runtime-protocol';

/** An event as the C# contract sees it (data and metadata as JSON values). */
export function toWireEvent(e: Pick<StoredEvent, 'eventId' | 'aggregateId' | 'aggregateType' | 'eventType' | 'version' | 'timestamp' | 'data' | 'metadata' | 'correlationId' | 'causationId'>): WireEvent {
  return {
    eventId: e.eventId,
    aggregateId: e.aggregateId,
    aggregateType: e.aggregateType,
    eventType: e.eventType,
    version: e.version,
    timestamp: isoTime(e.timestamp),
    data: JSON.parse(e.data),
    metadata: e.metadata === null ? null : JSON.parse(e.metadata),
    correlationId: e.correlationId,
    causationId: e.causationId,
  };
}
