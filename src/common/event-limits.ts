/**
 * Documented limits (README "Limits"). Types are restricted to characters that are safe in URL
 * paths, logs and keys without escaping; aggregate ids are any Unicode text (aggregate-id.ts).
 */
export const LIMITS = {
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

/** Reducer ids (uploads name them; they were checked by the aggregate ids' old rule, and still are). */
export const REDUCER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@+=~-]*$/;
export const AGGREGATE_TYPE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
export const EVENT_TYPE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/+-]*$/;
/** Correlation and causation ids: any printable ASCII, no spaces. */
export const TRACE_ID_PATTERN = /^[\x21-\x7e]+$/;

/** What a new aggregate is typed when its id gives no usable type (README "Aggregate ids"). */
export const FALLBACK_AGGREGATE_TYPE = 'aggregate';

/**
 * The aggregate type of a new aggregate whose first event names none: the part of the id before
 * the first '-' ('order-42' → 'order'), or the whole id when it has no '-', each character a type
 * may not hold made '_' ('acct/42' → 'acct_42', 'compte-é' → 'compte'). A head that would not be
 * a valid type (it does not start with an ASCII letter or digit: '日本-1', '🎉') gives
 * FALLBACK_AGGREGATE_TYPE, so every inferred type can be bound and named in a path.
 */
export function inferAggregateType(aggregateId: string): string {
  const dash = aggregateId.indexOf('-');
  const head = dash > 0 ? aggregateId.slice(0, dash) : aggregateId;
  // Per code point (the u flag), so an emoji is one '_', not two.
  const type = [...head]
    .slice(0, LIMITS.aggregateTypeMax)
    .join('')
    .replace(/[^A-Za-z0-9._-]/gu, '_');
  return AGGREGATE_TYPE_PATTERN.test(type) ? type : FALLBACK_AGGREGATE_TYPE;
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
