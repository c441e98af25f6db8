import { isoTime } from '../../common/iso-time';
import { anyJson, arrayOf, constant, Infer, integer, object, string, timestamp } from '../../common/json-schema';
import { RawJson, stringifyJson } from '../../common/raw-json';
import { REMOVED_STATE, type Notification } from '../../store/notification-repository.port';
import { traceIdOf } from '../../observability/tracing/tracing';

// The log's row type belongs to the store (which depends on nothing above it); re-exported for the
// channels that carry it.
export type { Notification };

/** The wire shape (polling element; the stream message adds `type`). */
export function notificationView(n: Notification): NotificationBody {
  return {
    sequence: n.sequence,
    projectionId: n.projectionId,
    aggregateId: n.aggregateId,
    aggregateType: n.aggregateType,
    stateKey: n.stateKey,
    version: n.version,
    state: new RawJson(n.state),
    // Only on a removal, so every other notification keeps the contract's shape exactly.
    ...(n.state === REMOVED_STATE ? { deleted: true as const } : {}),
    timestamp: isoTime(n.timestamp),
    ...traceFields(n),
  };
}

/** The W3C trace context the notification carries, named like the headers (only when present). */
function traceFields(n: Notification): { traceparent?: string; tracestate?: string } {
  if (!n.traceParent) return {};
  return n.traceState ? { traceparent: n.traceParent, tracestate: n.traceState } : { traceparent: n.traceParent };
}

const NOTIFICATION_FIELDS = {
  sequence: integer({ minimum: 1, description: 'the cursor: increases per notification of the projection' }),
  projectionId: string(),
  aggregateId: string(),
  aggregateType: string(),
  stateKey: string(),
  version: integer({ description: 'the version of the aggregate whose event changed the state' }),
  state: anyJson({ description: 'the state under stateKey after the event; null when the event removed it (then deleted: true)' }),
  timestamp: timestamp(),
};
const OPTIONAL_FIELDS = {
  deleted: constant(true, {
    description: "only when the event removed the key's state (IDeletableProjection): state is then null and the key's read answers 404",
  }),
};
const TRACE_FIELDS = {
  traceparent: string({
    description:
      "the W3C traceparent of the event's append (the caller's; with tracing on, the service's span in that trace); only when the append sent one",
  }),
  tracestate: string({ description: 'the W3C tracestate sent with that traceparent; only when one was' }),
};
const NOTIFICATION_SCHEMA = object(NOTIFICATION_FIELDS, { ...OPTIONAL_FIELDS, ...TRACE_FIELDS });
export type NotificationBody = Infer<typeof NOTIFICATION_SCHEMA>;
export const NOTIFICATIONS_PAGE_SCHEMA = object({ notifications: arrayOf(NOTIFICATION_SCHEMA) });

/**
 * The stream message (WebSocket, SSE, webhook body). `traceId` (and `traceparent`, `tracestate`) only
 * when the notification continues a trace: its append sent one, or tracing traced it; otherwise every
 * message is exactly as before (docs/notifications.md, Trace context).
 */
export function streamMessage(n: Notification): StreamMessage {
  const message = { type: 'state_changed' as const, ...notificationView(n) };
  return n.traceParent ? { ...message, traceId: traceIdOf(n.traceParent) } : message;
}

/** A WebSocket message, and the data of a server-sent event. */
export const STREAM_MESSAGE_SCHEMA = object(
  { type: constant('state_changed'), ...NOTIFICATION_FIELDS },
  {
    ...OPTIONAL_FIELDS,
    ...TRACE_FIELDS,
    traceId: string({ description: 'the W3C trace id of the append that caused it (only when traced)' }),
  },
);
export type StreamMessage = Infer<typeof STREAM_MESSAGE_SCHEMA>;

const texts = new WeakMap<Notification, string>();

/** `streamMessage` as JSON text, made once per notification however many clients get it. */
export function streamText(n: Notification): string {
  let t = texts.get(n);
  if (t === undefined) texts.set(n, (t = stringifyJson(streamMessage(n))));
  return t;
}
