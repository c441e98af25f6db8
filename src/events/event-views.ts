import { isoTime } from '../common/iso-time';
import { AppendResult, StoredEvent } from '../store/event-log.port';

/** Response of POST /events: the contract's fields, plus the tenant-wide `position` (read-your-writes). */
export function appendedView(r: AppendResult) {
  const e = r.events[0];
  return {
    eventId: e.eventId,
    aggregateId: r.aggregateId,
    aggregateType: r.aggregateType,
    version: e.version,
    timestamp: isoTime(e.timestamp),
    position: e.position,
  };
}

/** Response of POST /events/batch. */
export function batchAppendedView(r: AppendResult) {
  const first = r.events[0];
  const last = r.events[r.events.length - 1];
  return {
    aggregateId: r.aggregateId,
    aggregateType: r.aggregateType,
    startVersion: first.version,
    endVersion: last.version,
    eventIds: r.events.map((e) => e.eventId),
    timestamp: isoTime(last.timestamp),
    startPosition: first.position,
    endPosition: last.position,
  };
}

export function storedEventView(e: StoredEvent) {
  return {
    eventId: e.eventId,
    aggregateId: e.aggregateId,
    aggregateType: e.aggregateType,
    eventType: e.eventType,
    data: JSON.parse(e.data) as unknown,
    version: e.version,
    timestamp: isoTime(e.timestamp),
    position: e.position,
    correlationId: e.correlationId,
    causationId: e.causationId,
    metadata: e.metadata === null ? null : (JSON.parse(e.metadata) as unknown),
  };
}
