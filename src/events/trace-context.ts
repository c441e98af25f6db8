/**
 * The W3C Trace Context (https://www.w3.org/TR/trace-context/) a caller sends with an append, as
 * kept with its events (docs/notifications.md, "Trace context"). Checked, never refused: an invalid
 * `traceparent` is ignored (the append is stored without trace context), and so is its `tracestate`;
 * an invalid `tracestate` alone is dropped. The service reads nothing else from it.
 */
export interface CallerTraceContext {
  traceParent?: string;
  traceState?: string;
}

/** version-traceid-parentid-flags; lower-case hex only (the spec's rule). */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})/;
const ZEROS = /^0+$/;
/** The longest tracestate kept (the spec asks every vendor to pass on at least 512 characters). */
export const TRACESTATE_MAX_CHARS = 512;
const TRACESTATE_MAX_MEMBERS = 32;
/**
 * key=value; the key simple (lcalpha first) or multi-tenant (tenant@system); the value printable
 * ASCII without , and =, not ending in a space.
 */
const MEMBER =
  /^(?:[a-z][a-z0-9_*/-]{0,255}|[a-z0-9][a-z0-9_*/-]{0,240}@[a-z][a-z0-9_*/-]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/**
 * A valid traceparent as version 00, or undefined. Version 00 must be exactly its 55 characters; a
 * later version is read by its first four fields when what follows them is nothing or '-' (the
 * spec's forward compatibility) and kept as version 00 of the same ids and flags; version ff,
 * upper-case hex and all-zero ids are invalid.
 */
export function validTraceParent(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const m = TRACEPARENT.exec(value);
  if (!m) return undefined;
  const [head, version, traceId, parentId, flags] = m;
  if (version === 'ff' || ZEROS.test(traceId) || ZEROS.test(parentId)) return undefined;
  if (version === '00') return value.length === head.length ? value : undefined;
  if (value.length !== head.length && value[head.length] !== '-') return undefined;
  return `00-${traceId}-${parentId}-${flags}`;
}

/** A valid tracestate as sent (several headers joined by ', ', as Node joins them), or undefined. */
export function validTraceState(value: string | undefined): string | undefined {
  if (!value || value.length > TRACESTATE_MAX_CHARS) return undefined;
  let members = 0;
  for (const raw of value.split(',')) {
    const member = raw.replace(/^[ \t]+|[ \t]+$/g, '');
    if (member === '') continue; // empty list members are allowed
    if (++members > TRACESTATE_MAX_MEMBERS || !MEMBER.test(member)) return undefined;
  }
  return members > 0 ? value : undefined;
}

/** What an append keeps of the headers it was sent (`traceparent`, `tracestate`). */
export function callerTraceContext(
  traceparent: string | string[] | undefined,
  tracestate: string | string[] | undefined,
): CallerTraceContext {
  // Two traceparent headers make it invalid (the spec); Node joins repeated unknown headers with ', ' anyway.
  const traceParent = typeof traceparent === 'string' ? validTraceParent(traceparent) : undefined;
  if (!traceParent) return {};
  const traceState = validTraceState(Array.isArray(tracestate) ? tracestate.join(',') : tracestate);
  return traceState ? { traceParent, traceState } : { traceParent };
}
