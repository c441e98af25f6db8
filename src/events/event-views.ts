import { isoTime } from '../common/iso-time';
import { RawJson, rawJsonOrNull } from '../common/raw-json';
import { StoredEvent } from '../store/event-log.port';
import { AppendOutcomeWithState } from './append-pipeline';

/** `state` when a reducer is bound and applied; `stateError` when it failed on these events. */
function stateFields(o: AppendOutcomeWithState) {
  if (o.stateError) return { stateError: o.stateError };
  return o.state !== undefined ? { state: o.state } : {};
}

/** Response of POST /events: the contract's fields, plus the tenant-wide `position` (read-your-writes). */
export function appendedView(o: AppendOutcomeWithState) {
  const r = o.result;
  const e = r.events[0];
  return {
    eventId: e.eventId,
    aggregateId: r.aggregateId,
    aggregateType: r.aggregateType,
    version: e.version,
    timestamp: isoTime(e.timestamp),
    position: e.position,
    ...stateFields(o),
  };
}

/** Response of POST /events/batch. */
export function batchAppendedView(o: AppendOutcomeWithState) {
  const r = o.result;
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
    ...stateFields(o),
  };
}

export function storedEventView(e: StoredEvent) {
  return {
    eventId: e.eventId,
    aggregateId: e.aggregateId,
    aggregateType: e.aggregateType,
    eventType: e.eventType,
    data: new RawJson(e.data),
    version: e.version,
    timestamp: isoTime(e.timestamp),
    position: e.position,
    correlationId: e.correlationId,
    causationId: e.causationId,
    metadata: rawJsonOrNull(e.metadata),
  };
}
