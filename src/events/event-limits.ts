/**
 * Documented limits (README "Limits"). Identifiers are restricted to characters that are safe
 * in URL paths, logs and keys without escaping.
 */
export const LIMITS = {
  aggregateIdMax: 200,
  aggregateTypeMax: 100,
  eventTypeMax: 200,
  correlationIdMax: 200,
  /** Serialized `data` of one event, in bytes. */
  eventDataBytes: 256 * 1024,
  /** Serialized `metadata`, in bytes. */
  metadataBytes: 64 * 1024,
  eventsPerBatch: 1000,
  /** Nesting depth of `data` / `metadata` (objects and arrays). */
  jsonDepth: 32,
  /** Whole request body, in bytes (HTTP 413 past it). */
  bodyBytes: 4 * 1024 * 1024,
  readPageDefault: 1000,
  readPageMax: 10_000,
} as const;

export const AGGREGATE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@+=~-]*$/;
export const AGGREGATE_TYPE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
export const EVENT_TYPE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/+-]*$/;
/** Correlation and causation ids: any printable ASCII, no spaces. */
export const TRACE_ID_PATTERN = /^[\x21-\x7e]+$/;

/**
 * The aggregate type of a new aggregate whose first event names none: the part of the id before
 * the first '-' ('order-42' → 'order'), or the whole id when it has no '-'.
 */
export function inferAggregateType(aggregateId: string): string {
  const dash = aggregateId.indexOf('-');
  const head = dash > 0 ? aggregateId.slice(0, dash) : aggregateId;
  return head.slice(0, LIMITS.aggregateTypeMax).replace(/[^A-Za-z0-9._-]/g, '_');
}

/** Depth of nested objects/arrays, walked without recursion so hostile nesting cannot overflow the stack. */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) return true;
    const children = Array.isArray(v) ? v : Object.values(v as object);
    for (const c of children) if (c !== null && typeof c === 'object') stack.push([c, depth + 1]);
  }
  return false;
}
