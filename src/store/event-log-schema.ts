/**
 * The indexes the tenant's log read (EventLog.readLog) needs for its filters: with each, a page of
 * events of one aggregate type or one event type after a position is an index range, not a walk of
 * the tenant's whole log. The log without a filter reads the primary key (tenant_id, position).
 * Same text on both stores.
 */
export const EVENT_LOG_FILTER_MIGRATION = `
  CREATE INDEX events_by_type ON events (tenant_id, aggregate_type, position);
  CREATE INDEX events_by_event_type ON events (tenant_id, event_type, position);
  `;

/** At most this many values in one filter list (`aggregateType=a,b,…`): each is one index range of the query. */
export const LOG_FILTER_MAX_VALUES = 20;
