import { validationFailed } from '../common/domain-error';
import { EVENT_TYPE_PATTERN, LIMITS } from '../common/event-limits';
import { arrayOf, integer, JsonSchema, object, string } from '../common/json-schema';
import { AppendCondition, EventQuery, EventQueryItem } from '../store/event-log.port';

/**
 * Tags, DCB queries and append conditions as the edge takes them (docs/dcb.md, README "Tags and
 * queries"): plain functions from parsed JSON to the store port's types, or VALIDATION_FAILED with
 * `field` naming the offending element (`tags[2]`, `condition.failIfEventsMatch.items[1].types[0]`).
 * One parser for every route that takes a query: POST /events/query, the append conditions, and the
 * `query` parameter of GET /events, GET /events/stream and the event webhooks.
 */
export const DCB_LIMITS = {
  tagsPerEvent: 20,
  tagMaxLength: 200,
  queryItems: 20,
  typesPerItem: 20,
  tagsPerItem: 20,
} as const;

// U+0000–U+001F and U+007F: a tag is kept and compared exactly, and shows in logs and URLs.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Why `tag` is not a valid tag, or null. Length counts UTF-16 units, as every other limit of the service does. */
function tagProblem(tag: unknown): string | null {
  if (typeof tag !== 'string') return 'must be a string';
  if (tag.length < 1 || tag.length > DCB_LIMITS.tagMaxLength) return `must be 1-${DCB_LIMITS.tagMaxLength} characters`;
  if (CONTROL.test(tag)) return 'must not hold control characters (U+0000-U+001F, U+007F)';
  return null;
}

/** A list of distinct valid tags (an event's, or a query item's), at most `max`; kept exactly and in order. */
function parseTagList(value: unknown, field: string, max: number): string[] {
  if (!Array.isArray(value)) throw validationFailed(field, 'must be an array of strings');
  if (value.length > max) throw validationFailed(field, `must hold at most ${max} tags`);
  const seen = new Set<string>();
  value.forEach((tag, i) => {
    const problem = tagProblem(tag);
    if (problem) throw validationFailed(`${field}[${i}]`, problem);
    if (seen.has(tag as string)) throw validationFailed(`${field}[${i}]`, `'${(tag as string).slice(0, 50)}' is given twice`);
    seen.add(tag as string);
  });
  return value as string[];
}

/** An event's `tags`: undefined when absent or empty (an event without tags reads as before). */
export function parseEventTags(value: unknown, field = 'tags'): string[] | undefined {
  if (value === undefined) return undefined;
  const tags = parseTagList(value, field, DCB_LIMITS.tagsPerEvent);
  return tags.length > 0 ? tags : undefined;
}

function parseTypes(value: unknown, field: string): string[] {
  if (!Array.isArray(value)) throw validationFailed(field, 'must be an array of event types');
  if (value.length > DCB_LIMITS.typesPerItem) throw validationFailed(field, `must hold at most ${DCB_LIMITS.typesPerItem} types`);
  value.forEach((t, i) => {
    if (typeof t !== 'string' || t.length < 1 || t.length > LIMITS.eventTypeMax || !EVENT_TYPE_PATTERN.test(t)) {
      throw validationFailed(`${field}[${i}]`, 'must be a valid event type');
    }
  });
  return [...new Set(value as string[])];
}

/** Refuses fields it does not know: in a query a misspelt `tag` would otherwise widen an item to every event. */
function objectWith(value: unknown, field: string, known: readonly string[]): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw validationFailed(field, 'must be a JSON object');
  for (const k of Object.keys(value)) {
    if (!known.includes(k)) throw validationFailed(`${field}.${k}`, `is not a known field (${known.join(', ')})`);
  }
  return value as Record<string, unknown>;
}

function parseItem(value: unknown, field: string): EventQueryItem {
  const o = objectWith(value, field, ['types', 'tags']);
  const item: EventQueryItem = {};
  // An empty list constrains nothing, as an absent one (an item with neither matches every event).
  if (o.types !== undefined) {
    const types = parseTypes(o.types, `${field}.types`);
    if (types.length > 0) item.types = types;
  }
  if (o.tags !== undefined) {
    const tags = parseTagList(o.tags, `${field}.tags`, DCB_LIMITS.tagsPerItem);
    if (tags.length > 0) item.tags = tags;
  }
  return item;
}

/** `items` of a DCB query: 1-20 items, OR-ed. */
export function parseQueryItems(value: unknown, field = 'items'): EventQueryItem[] {
  if (!Array.isArray(value)) throw validationFailed(field, 'must be an array of query items');
  if (value.length === 0) throw validationFailed(field, 'must hold at least one item');
  if (value.length > DCB_LIMITS.queryItems) throw validationFailed(field, `must hold at most ${DCB_LIMITS.queryItems} items`);
  return value.map((item, i) => parseItem(item, `${field}[${i}]`));
}

/** A DCB query `{items: [...]}` (a condition's failIfEventsMatch; the `query` parameter, once parsed as JSON). */
export function parseEventQuery(value: unknown, field = 'query'): EventQuery {
  const o = objectWith(value, field, ['items']);
  return { items: parseQueryItems(o.items, `${field}.items`) };
}

/** The `query` URL parameter: URL-decoded JSON text of a DCB query. Absent: undefined. */
export function parseEventQueryParam(raw: string | string[] | undefined, field = 'query'): EventQuery | undefined {
  if (raw === undefined) return undefined;
  if (Array.isArray(raw)) throw validationFailed(field, 'must be given once');
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw validationFailed(field, 'must be the JSON text of a query {"items":[...]}');
  }
  return parseEventQuery(parsed, field);
}

/** An append's `condition`: `{failIfEventsMatch: {items}, after?}`. Absent: undefined. */
export function parseAppendCondition(value: unknown, field = 'condition'): AppendCondition | undefined {
  if (value === undefined) return undefined;
  const o = objectWith(value, field, ['failIfEventsMatch', 'after']);
  const failIfEventsMatch = parseEventQuery(o.failIfEventsMatch, `${field}.failIfEventsMatch`);
  if (o.after === undefined) return { failIfEventsMatch };
  if (typeof o.after !== 'number' || !Number.isSafeInteger(o.after) || o.after < 0) {
    throw validationFailed(`${field}.after`, 'must be an integer position >= 0');
  }
  return { failIfEventsMatch, after: o.after };
}

/** JSON Schemas of the request fields (OpenAPI; the parsers above are the rule). */
const TAG_SCHEMA = string({
  minLength: 1,
  maxLength: DCB_LIMITS.tagMaxLength,
  description: 'no control characters (U+0000-U+001F, U+007F); kept and compared exactly',
});
export const TAGS_SCHEMA: JsonSchema = arrayOf(TAG_SCHEMA, {
  maxItems: DCB_LIMITS.tagsPerEvent,
  uniqueItems: true,
  description: `the event's tags (DCB): at most ${DCB_LIMITS.tagsPerEvent}, distinct, kept in order; returned on reads only when present`,
});
export const QUERY_ITEMS_SCHEMA: JsonSchema = arrayOf(
  object(
    {},
    {
      types: arrayOf(string(), { maxItems: DCB_LIMITS.typesPerItem, description: 'any of these event types (absent or empty: any)' }),
      tags: arrayOf(TAG_SCHEMA, { maxItems: DCB_LIMITS.tagsPerItem, description: 'all of these tags (absent or empty: any)' }),
    },
    { additionalProperties: false },
  ),
  {
    minItems: 1,
    maxItems: DCB_LIMITS.queryItems,
    description: 'an event matches when it matches any item; an item with neither types nor tags matches every event',
  },
);
export const EVENT_QUERY_SCHEMA: JsonSchema = object({ items: QUERY_ITEMS_SCHEMA }, {}, { additionalProperties: false });
export const APPEND_CONDITION_SCHEMA: JsonSchema = object(
  { failIfEventsMatch: EVENT_QUERY_SCHEMA },
  { after: integer({ minimum: 0, description: 'the position the client read up to (absent: any matching event fails the append)' }) },
  {
    additionalProperties: false,
    description: 'DCB append condition: 409 APPEND_CONDITION_FAILED when an event matching failIfEventsMatch was stored after `after`',
  },
);
