/**
 * Told after each acknowledged append. AppendPipeline calls it; LanesModule binds it to LaneEngine,
 * which wakes the tenant's router (live latency without polling).
 */
export interface AppendCommitted {
  /**
   * `traced` (tracing on only): the appending span as a W3C traceparent and the append's first
   * position, so that the routing and lane runs of positions `fromPosition`..`position` continue its trace.
   */
  appended(tenantId: string, position: number, traced?: AppendTrace): void;
}

export interface AppendTrace {
  traceParent: string;
  fromPosition: number;
}

export const APPEND_COMMITTED = Symbol('APPEND_COMMITTED');

/**
 * The same news for the live readers of the log (GET /events/stream): NotificationsModule binds it
 * to EventFeed, which wakes this instance's event streams and, through Redis, the other instances'.
 */
export abstract class EventsAppended implements AppendCommitted {
  abstract appended(tenantId: string, position: number, traced?: AppendTrace): void;
}

/** The event webhooks' listener (src/event-webhooks binds it to its dispatcher): told after the lanes. */
export const EVENT_WEBHOOKS_APPENDED = Symbol('EVENT_WEBHOOKS_APPENDED');

/** Several listeners behind the one port (lanes, event webhooks): each told, in order; none can stop the others. */
export function appendCommittedToAll(...listeners: AppendCommitted[]): AppendCommitted {
  return { appended: (tenantId, position, traced) => listeners.forEach((l) => l.appended(tenantId, position, traced)) };
}
