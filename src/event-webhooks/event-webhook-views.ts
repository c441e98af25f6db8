import { isoTime } from '../common/iso-time';
import { arrayOf, Infer, integer, nullable, object, oneOfStrings, string, timestamp } from '../common/json-schema';
import { EventWebhookDeadLetter } from '../store/event-webhook-records';
import { EVENT_QUERY_SCHEMA } from '../events/event-query';
import { EventWebhookStatus, PENDING_COUNT_CAP, PENDING_COUNT_WINDOW } from './event-webhooks';

const orNull = (ms: number | null) => (ms === null ? null : isoTime(ms));

export function eventWebhookView(s: EventWebhookStatus): EventWebhook {
  const w = s.webhook;
  return {
    webhookId: w.webhookId,
    name: w.name,
    url: w.url,
    aggregateTypes: w.aggregateTypes,
    eventTypes: w.eventTypes,
    query: w.query,
    status: w.status,
    deliveredPosition: w.deliveredPosition,
    headPosition: s.headPosition,
    pendingEvents: s.pendingEvents,
    deadDeliveries: s.deadDeliveries,
    attempts: w.attempts,
    nextAttemptAt: w.status === 'active' && w.attempts > 0 ? isoTime(w.nextAttemptAt) : null,
    lastError: w.lastError,
    lastErrorAt: orNull(w.lastErrorAt),
    suspendedAt: orNull(w.suspendedAt),
    suspendedReason: w.suspendedReason,
    createdAt: isoTime(w.createdAt),
  };
}

export const EVENT_WEBHOOK_SCHEMA = object({
  webhookId: string(),
  name: nullable(string()),
  url: string(),
  aggregateTypes: nullable(arrayOf(string(), { description: 'null: every aggregate type' })),
  eventTypes: nullable(arrayOf(string(), { description: 'null: every event type' })),
  query: nullable({ ...EVENT_QUERY_SCHEMA, description: 'the DCB query AND-ed with the type lists (docs/dcb.md); null: none' }),
  status: oneOfStrings(['active', 'suspended']),
  deliveredPosition: integer({ minimum: 0, description: 'every matching event at or below it is delivered or dead-lettered' }),
  headPosition: integer({ minimum: 0, description: "the tenant's last position" }),
  pendingEvents: integer({
    minimum: 0,
    maximum: PENDING_COUNT_CAP,
    description:
      `matching events among the ${PENDING_COUNT_WINDOW} positions after deliveredPosition, counted up to ${PENDING_COUNT_CAP} ` +
      '(that figure means at least as many; compare headPosition with deliveredPosition for the whole distance)',
  }),
  deadDeliveries: integer({ minimum: 0 }),
  attempts: integer({ minimum: 0, description: 'failed attempts of the next event' }),
  nextAttemptAt: nullable(timestamp({ description: 'when the next event is tried again, after a failed attempt' })),
  lastError: nullable(string()),
  lastErrorAt: nullable(timestamp()),
  suspendedAt: nullable(timestamp()),
  suspendedReason: nullable(string()),
  createdAt: timestamp(),
});
export type EventWebhook = Infer<typeof EVENT_WEBHOOK_SCHEMA>;

export const EVENT_WEBHOOK_CREATED_SCHEMA = {
  ...EVENT_WEBHOOK_SCHEMA,
  properties: {
    ...(EVENT_WEBHOOK_SCHEMA.properties as object),
    secret: string({ description: "the tenant's shared webhook secret every delivery is signed with (Standard Webhooks)" }),
  },
  required: [...(EVENT_WEBHOOK_SCHEMA.required as string[]), 'secret'],
};

export const EVENT_WEBHOOKS_SCHEMA = object({ eventWebhooks: arrayOf(EVENT_WEBHOOK_SCHEMA) });

export function deadLetterView(d: EventWebhookDeadLetter): DeadLetter {
  return {
    position: d.position,
    eventId: d.eventId,
    status: 'dead' as const,
    attempts: d.attempts,
    lastError: d.lastError,
    deadAt: isoTime(d.deadAt),
  };
}

const DEAD_LETTER_SCHEMA = object({
  position: integer({ minimum: 1 }),
  eventId: string(),
  status: oneOfStrings(['dead']),
  attempts: integer({ minimum: 1 }),
  lastError: nullable(string()),
  deadAt: timestamp(),
});
export type DeadLetter = Infer<typeof DEAD_LETTER_SCHEMA>;

export const EVENT_WEBHOOK_DELIVERIES_SCHEMA = object({ deliveries: arrayOf(DEAD_LETTER_SCHEMA) });
