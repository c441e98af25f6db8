import { isoTime } from '../../common/iso-time';
import { anyJson, arrayOf, constant, integer, JsonSchema, object, string, timestamp } from '../../common/json-schema';
import { RawJson, stringifyJson } from '../../common/raw-json';
import type { Notification } from '../../store/notification-repository.port';
import { traceIdOf } from '../../observability/tracing/tracing';

// The log's row type belongs to the store (which depends on nothing above it); re-exported for the
// channels that carry it.
export type { Notification };

/** The wire shape (polling element; the stream message adds `type`). */
export function notificationView(n: Notification) {
  return {
    sequence: n.sequence,
    projectionId: n.projectionId,
    aggregateId: n.aggregateId,
    aggregateType: n.aggregateType,
    stateKey: n.stateKey,
    version: n.version,
    state: new RawJson(n.state),
    timestamp: isoTime(n.timestamp),
  };
}

const NOTIFICATION_FIELDS = {
  sequence: integer({ minimum: 1, description: 'the cursor: increases per notification of the projection' }),
  projectionId: string(),
  aggregateId: string(),
  aggregateType: string(),
  stateKey: string(),
  version: integer({ description: 'the version of the aggregate whose event changed the state' }),
  state: anyJson({ description: 'the state under stateKey after the event' }),
  timestamp: timestamp(),
};
export const NOTIFICATIONS_PAGE_SCHEMA: JsonSchema = object({ notifications: arrayOf(object(NOTIFICATION_FIELDS)) });

/**
 * The stream message (WebSocket, SSE, webhook body). `traceId` only when the notification continues
 * a trace (tracing on): with tracing off every message is exactly as before (docs/operations.md, Tracing).
 */
export function streamMessage(n: Notification) {
  const message = { type: 'state_changed' as const, ...notificationView(n) };
  return n.traceParent ? { ...message, traceId: traceIdOf(n.traceParent) } : message;
}

/** A WebSocket message, and the data of a server-sent event. */
export const STREAM_MESSAGE_SCHEMA: JsonSchema = object(
  { type: constant('state_changed'), ...NOTIFICATION_FIELDS },
  { traceId: string({ description: 'the W3C trace id of the append that caused it (only with tracing on)' }) },
);

const texts = new WeakMap<Notification, string>();

/** `streamMessage` as JSON text, made once per notification however many clients get it. */
export function streamText(n: Notification): string {
  let t = texts.get(n);
  if (t === undefined) texts.set(n, (t = stringifyJson(streamMessage(n))));
  return t;
}
