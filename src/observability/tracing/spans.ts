import { SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_SCHEME,
} from '@opentelemetry/semantic-conventions';
import type { AppendTraces } from './append-traces';
import {
  activeTraceParent,
  inActiveSpan,
  parseTraceParent,
  startCarriedSpan,
  startChildSpan,
  startLinkedSpan,
  traceParentOf,
  tracingOn,
} from './tracing';

/**
 * The spans of an event's hops, each made by one call at its hop (docs/operations.md, "Tracing",
 * lists them). Every function returns at once when tracing is off, before building anything. No
 * span carries tenant data (no aggregate id, state key, payload or URL path): ids of tenants,
 * projections and versions, positions and counts only.
 */

/** The group commit: one span per transaction, linked to the span of each append it carries. */
export function startCommitSpan(appends: readonly { trace?: string }[]): Span | undefined {
  if (!tracingOn()) return undefined;
  return startLinkedSpan(
    'eventstore.commit',
    appends.map((a) => a.trace),
    { 'eventstore.commit.appends': appends.length },
  );
}

/** A reducer's fold of an append's events, inside the request's span. */
export function inReducerSpan<T>(tenantId: string, reducerId: string, events: number, fold: () => Promise<T>): Promise<T> {
  if (!tracingOn()) return fold();
  return inActiveSpan(
    'eventstore.reducer',
    { 'eventstore.tenant_id': tenantId, 'eventstore.reducer_id': reducerId, 'eventstore.events': events },
    fold,
  );
}

/** What an acknowledged append hands on (APPEND_COMMITTED): its span and first position. */
export function appendTrace(fromPosition: number): { traceParent: string; fromPosition: number } | undefined {
  const traceParent = activeTraceParent();
  return traceParent ? { traceParent, fromPosition } : undefined;
}

/** A router pass over positions `from`..`to` (begun at `startTime`, epoch ms), in the trace of their first traced append. */
export function startRouteSpan(
  traces: AppendTraces | undefined,
  tenantId: string,
  from: number,
  to: number,
  startTime: number,
  versions: number,
): Span | undefined {
  if (!traces || !tracingOn() || to < from) return undefined;
  return startCarriedSpan(
    'eventstore.route',
    traces.between(tenantId, from, to),
    { 'eventstore.tenant_id': tenantId, 'eventstore.position.from': from, 'eventstore.position.to': to, 'eventstore.versions': versions },
    { startTime },
  );
}

/**
 * A lane's run over these events, in the trace of the first traced append among them: the append's
 * span remembered here, else the caller's traceparent stored with the event (a restart, another instance).
 */
export function startLaneRunSpan(
  traces: AppendTraces | undefined,
  lane: { tenantId: string; versionId: string },
  events: readonly { position: number; traceParent?: string }[],
): Span | undefined {
  if (!traces || !tracingOn() || events.length === 0) return undefined;
  return startCarriedSpan(
    'eventstore.lane.run',
    [
      ...traces.of(
        lane.tenantId,
        events.map((e) => e.position),
      ),
      ...events.map((e) => e.traceParent),
    ],
    {
      'eventstore.tenant_id': lane.tenantId,
      'eventstore.version_id': lane.versionId,
      'eventstore.events': events.length,
      'eventstore.position.from': events[0].position,
      'eventstore.position.to': events[events.length - 1].position,
    },
  );
}

/** The notification log write of a lane run (a child of the run). */
export function startNotificationWriteSpan(run: Span | undefined, projectionId: string, notifications: number): Span | undefined {
  if (!run || notifications === 0) return undefined;
  return startChildSpan('eventstore.notification.write', run, {
    'eventstore.projection_id': projectionId,
    'eventstore.notifications': notifications,
  });
}

/**
 * The trace a notification keeps (its stored trace_parent) for the webhook attempts and streams it
 * causes: the write span when its event's append is in the run's trace, else that append's own
 * span (a run serving two appends writes each notification into its own event's trace).
 */
export function notificationTraceParent(write: Span, eventTrace: string | undefined): string | undefined {
  if (!eventTrace) return undefined;
  const own = parseTraceParent(eventTrace);
  return own && own.traceId === write.spanContext().traceId ? traceParentOf(write) : eventTrace;
}

/** One webhook attempt (CLIENT), in the trace its notification kept; `attempts` counts this one. */
export function startWebhookAttemptSpan(
  traceParent: string | undefined,
  url: string,
  delivery: { tenantId: string; projectionId: string; sequence: number; attempts: number },
): Span | undefined {
  if (!traceParent || !tracingOn()) return undefined;
  const u = new URL(url);
  const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  return startCarriedSpan(
    'eventstore.webhook.attempt',
    [traceParent],
    {
      [ATTR_HTTP_REQUEST_METHOD]: 'POST',
      [ATTR_URL_SCHEME]: u.protocol.slice(0, -1),
      [ATTR_SERVER_ADDRESS]: u.hostname,
      [ATTR_SERVER_PORT]: port,
      'eventstore.tenant_id': delivery.tenantId,
      'eventstore.projection_id': delivery.projectionId,
      'eventstore.notification.sequence': delivery.sequence,
      'eventstore.webhook.attempt': delivery.attempts,
    },
    { kind: SpanKind.CLIENT },
  );
}

/** The attempt's outcome: the receiver's status, or the failure (refused address, timeout, 4xx/5xx). */
export function endWebhookAttemptSpan(span: Span | undefined, result: { ok: true; status: number } | { ok: false; error: string }): void {
  if (!span) return;
  if (result.ok) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, result.status);
  else {
    const status = /^HTTP (\d+)$/.exec(result.error);
    if (status) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, Number(status[1]));
    span.setAttribute(ATTR_ERROR_TYPE, status ? status[1] : 'delivery_failed');
    span.setStatus({ code: SpanStatusCode.ERROR, message: result.error });
  }
  span.end();
}
