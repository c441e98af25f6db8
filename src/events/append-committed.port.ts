/**
 * Told after each acknowledged append (and after an erasure's `$erased` event). AppendPipeline.append
 * and EventEraser.erase call it; LanesModule binds it to LaneEngine, which wakes the tenant's router
 * (live latency without polling). An abstract class: the port's type and its Nest token at once.
 */
export abstract class AppendCommitted {
  /**
   * `traced` (tracing on only): the appending span as a W3C traceparent and the append's first
   * position, so that the routing and lane runs of positions `fromPosition`..`position` continue its trace.
   */
  abstract appended(tenantId: string, position: number, traced?: AppendTrace): void;
}

export interface AppendTrace {
  traceParent: string;
  fromPosition: number;
}

/**
 * The event webhooks' doorbell, told after the lanes: EventWebhooksModule binds it to
 * EventWebhookDispatcher (a wake-up of its tick; the poll covers other instances' appends).
 */
export abstract class EventWebhooksAppended {
  abstract appended(tenantId: string, position: number, traced?: AppendTrace): void;
}

/**
 * The same news for the live readers of the log (GET /events/stream), told last: NotificationsModule
 * binds it to EventFeed, which wakes this instance's event streams and, through Redis, the other instances'.
 */
export abstract class EventsAppended {
  abstract appended(tenantId: string, position: number): void;
}

/** TODO(merge): the former Symbol tokens' names, kept only so that the other slices' bindings compile until the lead renames them. */
export const APPEND_COMMITTED = AppendCommitted;
export const EVENT_WEBHOOKS_APPENDED = EventWebhooksAppended;
export const EVENTS_APPENDED = EventsAppended;
