import type { IncomingMessage, ServerResponse } from 'http';

/** The raw query of an event stream: checked by the stream itself, with the same rules as GET /events (log-query.ts). */
export interface EventStreamQuery {
  afterPosition?: string;
  aggregateType?: string | string[];
  eventType?: string | string[];
  /** The DCB query as URL-decoded JSON text (log-query.ts parses it). */
  query?: string | string[];
}

/**
 * `GET /events/stream` as server-sent events, for EventsController, which has authenticated the
 * tenant and taken the reply over; the stream answers its own refusals. NotificationsModule binds
 * it (notifications/streams, beside the projection streams whose keepalive, slow-consumer cut and
 * caps it shares). The WebSocket upgrade of the same path never reaches a route.
 */
export abstract class EventStreamSse {
  abstract serve(
    req: IncomingMessage,
    res: ServerResponse,
    owner: { tenantId: string; keyHash: string },
    query: EventStreamQuery,
    lastEventId?: string,
  ): Promise<void>;
}
