import {
  Attributes,
  context,
  Link,
  ROOT_CONTEXT,
  Span,
  SpanContext,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  Tracer,
} from '@opentelemetry/api';

/**
 * What every hop calls. Tracing is on only once `startTracing` (tracing-setup.ts) has registered a
 * provider: until then each helper returns at its first line, so with tracing off no span object
 * (not even the API's no-op one), no context and no traceparent string is made anywhere.
 *
 * A trace travels with the work as a W3C `traceparent` string: with an acknowledged append (the
 * APPEND_COMMITTED port), remembered by position for the router and the lanes (AppendTraces), stored
 * with each notification (notifications.trace_parent) for the webhook attempts and the streams.
 */
let tracer: Tracer | undefined;

/** Set by tracing-setup.ts only. */
export function setTracingTracer(t: Tracer | undefined): void {
  tracer = t;
}

export function tracingOn(): boolean {
  return tracer !== undefined;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A `traceparent` as a remote span context; undefined when malformed (or all zeros). */
export function parseTraceParent(value: string | null | undefined): SpanContext | undefined {
  const m = value ? TRACEPARENT.exec(value) : null;
  if (!m || /^0+$/.test(m[1]) || /^0+$/.test(m[2])) return undefined;
  return { traceId: m[1], spanId: m[2], traceFlags: parseInt(m[3], 16) & TraceFlags.SAMPLED, isRemote: true };
}

export function formatTraceParent(c: SpanContext): string {
  return `00-${c.traceId}-${c.spanId}-0${c.traceFlags & TraceFlags.SAMPLED}`;
}

/** The trace id part of a `traceparent` (what stream messages carry). */
export function traceIdOf(traceParent: string): string {
  return traceParent.slice(3, 35);
}

/** The active span as a `traceparent` (a request's, a reducer call's); undefined when off or none. */
export function activeTraceParent(): string | undefined {
  if (!tracer) return undefined;
  const span = trace.getSpan(context.active());
  return span ? formatTraceParent(span.spanContext()) : undefined;
}

/** The `traceparent` of a span this module started (undefined in, undefined out). */
export function traceParentOf(span: Span | undefined): string | undefined {
  return span ? formatTraceParent(span.spanContext()) : undefined;
}

/**
 * A span in the active context (the request's path), around `work`; off: `work()` alone.
 * Failures are recorded on the span and passed on.
 */
export function inActiveSpan<T>(name: string, attributes: Attributes, work: () => Promise<T>): Promise<T> {
  if (!tracer) return work();
  return tracer.startActiveSpan(name, { attributes }, (span) => endWith(span, work()));
}

/**
 * A span for work done later, outside any request, that carries the traces it serves: its parent is
 * the first of them (so it belongs to that trace) and the others are links (a router pass or a lane
 * run may serve several appends). Undefined when tracing is off or the work carries no trace: a
 * sweep or a catch-up of events no traced append remembered starts no span.
 */
export function startCarriedSpan(
  name: string,
  carried: readonly (string | null | undefined)[],
  attributes: Attributes,
  options: { kind?: SpanKind; startTime?: number } = {},
): Span | undefined {
  if (!tracer) return undefined;
  const contexts: SpanContext[] = [];
  const seen = new Set<string>();
  for (const c of carried) {
    const parsed = c && !seen.has(c) ? parseTraceParent(c) : undefined;
    if (!parsed) continue;
    seen.add(c!);
    contexts.push(parsed);
  }
  if (contexts.length === 0) return undefined;
  const [parent, ...others] = contexts;
  const links: Link[] = others.map((c) => ({ context: c }));
  return tracer.startSpan(name, { ...options, attributes, links }, trace.setSpanContext(ROOT_CONTEXT, parent));
}

/**
 * A span for one batch that serves many requests (the group commit): a root of its own, linked to
 * the span of each request it carries. Undefined when off or none is traced.
 */
export function startLinkedSpan(name: string, carried: readonly (string | undefined)[], attributes: Attributes): Span | undefined {
  if (!tracer) return undefined;
  const links: Link[] = [];
  for (const c of carried) {
    const parsed = parseTraceParent(c);
    if (parsed) links.push({ context: parsed });
  }
  if (links.length === 0) return undefined;
  return tracer.startSpan(name, { attributes, links, root: true }, ROOT_CONTEXT);
}

/** A child of `parent` (a lane run's notification write); undefined without a parent. */
export function startChildSpan(name: string, parent: Span | undefined, attributes: Attributes): Span | undefined {
  if (!tracer || !parent) return undefined;
  return tracer.startSpan(name, { attributes }, trace.setSpan(ROOT_CONTEXT, parent));
}

/** Ends `span` once `work` settles (a rejection is recorded as the span's error), and passes `work` on. */
export function endWith<T>(span: Span | undefined, work: Promise<T>): Promise<T> {
  if (!span) return work;
  return work.then(
    (value) => {
      span.end();
      return value;
    },
    (e: unknown) => {
      failed(span, e);
      span.end();
      throw e;
    },
  );
}

/** Marks the span failed (status ERROR, the exception recorded). */
export function failed(span: Span | undefined, e: unknown): void {
  if (!span) return;
  span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
  if (e instanceof Error) span.recordException(e);
}

export { SpanKind };
export type { Span };
