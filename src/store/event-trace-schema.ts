/**
 * The W3C trace context sent with an append (issue 24, item 7), kept with its events and with the
 * notifications they cause, so a caller's trace reaches reads, streams and webhooks whether or not
 * the service exports spans, after a restart and on any instance. NULL when none (or an invalid one)
 * was sent. Same text on both stores; no index (never searched by).
 */
export const EVENT_TRACE_MIGRATION = `
  ALTER TABLE events ADD COLUMN trace_parent TEXT;
  ALTER TABLE events ADD COLUMN trace_state TEXT;
  ALTER TABLE notifications ADD COLUMN trace_state TEXT;
  `;
