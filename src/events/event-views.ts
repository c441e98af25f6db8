import { isoTime } from '../common/iso-time';
import {
  anyJson,
  arrayOf,
  constant,
  Infer,
  integer,
  jsonObject,
  nullable,
  object,
  string,
  timestamp,
  withLeadingFields,
} from '../common/json-schema';
import { RawJson, rawJsonOrNull, stringifyJson } from '../common/raw-json';
import { StoredEvent } from '../store/event-log.port';
import { ErasureResult } from '../store/erasure.port';
import { AppendOutcomeWithState } from './stateful-append.port';
import { RUNTIME_FAILURE_FIELDS } from '../tenant-code/runtime-failure';

/** `state` when a reducer is bound and applied; `stateError` when it failed on these events. */
function stateFields(o: AppendOutcomeWithState) {
  if (o.stateError) return { stateError: o.stateError };
  return o.state !== undefined ? { state: o.state } : {};
}

const STATE_FIELDS = {
  state: anyJson({ description: "the aggregate's state after the append: present when a reducer is bound to the type" }),
  stateError: object(
    { code: { enum: ['REDUCER_FAILED', 'STATE_TOO_LARGE'] }, message: string(), failedVersion: integer() },
    RUNTIME_FAILURE_FIELDS,
    { description: 'instead of state: the reducer failed on these events (they are stored all the same)' },
  ),
};

/** Response of POST /events: the contract's fields, plus the tenant-wide `position` (read-your-writes). */
export function appendedView(o: AppendOutcomeWithState): Appended {
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

export const APPENDED_SCHEMA = object(
  {
    eventId: string(),
    aggregateId: string(),
    aggregateType: string(),
    version: integer({ minimum: 1 }),
    timestamp: timestamp(),
    position: integer({ minimum: 1, description: 'tenant-wide position of the event (read-your-writes with minPosition)' }),
  },
  STATE_FIELDS,
);
export type Appended = Infer<typeof APPENDED_SCHEMA>;

/** Response of POST /events/batch. */
export function batchAppendedView(o: AppendOutcomeWithState): BatchAppended {
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

export const BATCH_APPENDED_SCHEMA = object(
  {
    aggregateId: string(),
    aggregateType: string(),
    startVersion: integer({ minimum: 1 }),
    endVersion: integer({ minimum: 1 }),
    eventIds: arrayOf(string()),
    timestamp: timestamp(),
    startPosition: integer({ minimum: 1 }),
    endPosition: integer({ minimum: 1 }),
  },
  STATE_FIELDS,
);
export type BatchAppended = Infer<typeof BATCH_APPENDED_SCHEMA>;

/** Response of POST /events/transaction: the positions it occupies, and each aggregate's part in order of first appearance. */
export function transactionAppendedView(outcomes: AppendOutcomeWithState[]): TransactionAppended {
  const events = outcomes.flatMap((o) => o.result.events);
  const positions = events.map((e) => e.position);
  return {
    startPosition: Math.min(...positions),
    endPosition: Math.max(...positions),
    aggregates: outcomes.map((o) => ({
      aggregateId: o.result.aggregateId,
      aggregateType: o.result.aggregateType,
      startVersion: o.result.events[0].version,
      endVersion: o.result.events[o.result.events.length - 1].version,
      eventIds: o.result.events.map((e) => e.eventId),
      ...stateFields(o),
    })),
    timestamp: isoTime(Math.max(...events.map((e) => e.timestamp))),
  };
}

export const TRANSACTION_APPENDED_SCHEMA = object({
  startPosition: integer({
    minimum: 1,
    description: "the transaction's first position; its events occupy startPosition..endPosition without a gap",
  }),
  endPosition: integer({ minimum: 1 }),
  aggregates: arrayOf(
    object(
      {
        aggregateId: string(),
        aggregateType: string(),
        startVersion: integer({ minimum: 1 }),
        endVersion: integer({ minimum: 1 }),
        eventIds: arrayOf(string()),
      },
      STATE_FIELDS,
    ),
    { description: 'one per aggregate, in the order of its first event in the request (its events stored contiguously, in order)' },
  ),
  timestamp: timestamp(),
});
export type TransactionAppended = Infer<typeof TRANSACTION_APPENDED_SCHEMA>;

export function storedEventView(e: StoredEvent): StoredEventBody {
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
    // The caller's W3C trace context, exactly as kept: only when the append sent a valid one.
    ...(e.traceParent ? { traceparent: e.traceParent } : {}),
    ...(e.traceState ? { tracestate: e.traceState } : {}),
    // Erased (README "Erasure"): data is {} and metadata null; the rest is the tombstone.
    ...(e.erasedAt !== undefined ? { erasedAt: isoTime(e.erasedAt) } : {}),
    // Only when the event has tags: an event without them reads byte for byte as before tags.
    ...(e.tags !== undefined && e.tags.length > 0 ? { tags: e.tags } : {}),
  };
}

export const STORED_EVENT_SCHEMA = object(
  {
    eventId: string(),
    aggregateId: string(),
    aggregateType: string(),
    eventType: string(),
    data: jsonObject({ description: 'the event payload, exactly as appended ({} once the aggregate is erased)' }),
    version: integer({ minimum: 1, description: 'the first event of an aggregate has version 1' }),
    timestamp: timestamp(),
    position: integer({ minimum: 1 }),
    correlationId: nullable(string()),
    causationId: nullable(string()),
    metadata: nullable(jsonObject()),
  },
  {
    traceparent: string({ description: 'the W3C traceparent sent with the append (a valid one), as sent; only when one was' }),
    tracestate: string({ description: 'the W3C tracestate sent with that traceparent; only when one was' }),
    erasedAt: timestamp({ description: 'only on an erased aggregate: when its data and metadata were removed' }),
    tags: arrayOf(string(), { description: "the event's tags (DCB), in the order appended; only when it has some (none after erasure)" }),
  },
);
export type StoredEventBody = Infer<typeof STORED_EVENT_SCHEMA>;

/** DELETE /events/{aggregateId}: the erasure (the same answer again for an aggregate erased before). */
export function erasedView(r: ErasureResult): Erased {
  return {
    aggregateId: r.aggregateId,
    aggregateType: r.aggregateType,
    version: r.version,
    erasedAt: isoTime(r.erasedAt),
    erasedEvent: {
      eventId: r.erasedEvent.eventId,
      aggregateId: r.erasedEvent.aggregateId,
      aggregateType: r.erasedEvent.aggregateType,
      eventType: r.erasedEvent.eventType,
      position: r.erasedEvent.position,
      version: r.erasedEvent.version,
    },
  };
}

export const ERASED_SCHEMA = object({
  aggregateId: string(),
  aggregateType: string(),
  version: integer({ minimum: 1, description: "the aggregate's version: its events 1..version are tombstones now" }),
  erasedAt: timestamp(),
  erasedEvent: object(
    {
      eventId: string(),
      aggregateId: string({ description: "'$erasures', the tenant's stream of erasures" }),
      aggregateType: string({ description: "'$system'" }),
      eventType: string({ description: "'$erased'" }),
      position: integer({ minimum: 1 }),
      version: integer({ minimum: 1 }),
    },
    {},
    { description: 'the $erased system event written in the same transaction (projections drop what they derived)' },
  ),
});
export type Erased = Infer<typeof ERASED_SCHEMA>;

/** GET /events/{aggregateId}: a page of the stream; `nextFromVersion` when more follow. */
export const STORED_EVENTS_PAGE_SCHEMA = object(
  { events: arrayOf(STORED_EVENT_SCHEMA) },
  {
    nextFromVersion: integer({ minimum: 1, description: 'pass as fromVersion to read the next page' }),
    nextBeforeVersion: integer({ minimum: 2, description: 'direction=backward: older events precede; pass as beforeVersion' }),
  },
);

/** GET /events: a page of the tenant's log (its cursors: README, "Reading the log"). */
export function logPageView(page: { events: StoredEvent[]; nextAfterPosition?: number; nextBeforePosition?: number }): LogPage {
  return {
    events: page.events.map(storedEventView),
    ...(page.nextAfterPosition !== undefined ? { nextAfterPosition: page.nextAfterPosition } : {}),
    ...(page.nextBeforePosition !== undefined ? { nextBeforePosition: page.nextBeforePosition } : {}),
  };
}

export const LOG_PAGE_SCHEMA = object(
  { events: arrayOf(STORED_EVENT_SCHEMA) },
  {
    nextAfterPosition: integer({
      minimum: 0,
      description: 'forward: always present — the last position returned, or afterPosition when the page is empty; pass as afterPosition',
    }),
    nextBeforePosition: integer({
      minimum: 1,
      description: 'backward: the oldest position returned, present when the page is full; pass as beforePosition',
    }),
  },
);
export type LogPage = Infer<typeof LOG_PAGE_SCHEMA>;

/** One message of GET /events/stream (WebSocket message, SSE `event` data): the event as the log read shows it. */
export function eventStreamText(e: StoredEvent): string {
  const message: EventStreamMessage = { type: 'event', ...storedEventView(e) };
  return stringifyJson(message);
}

export const EVENT_STREAM_MESSAGE_SCHEMA = withLeadingFields({ type: constant('event') }, STORED_EVENT_SCHEMA);
export type EventStreamMessage = Infer<typeof EVENT_STREAM_MESSAGE_SCHEMA>;
