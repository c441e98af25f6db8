import { DomainError } from '../common/domain-error';
import { parseAppendCondition, parseEventQuery, parseEventQueryParam, parseEventTags, parseQueryItems } from './event-query';

/** The field a VALIDATION_FAILED names. */
function fieldOf(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    expect((e as DomainError).code).toBe('VALIDATION_FAILED');
    return (e as DomainError).details.field;
  }
  throw new Error('accepted');
}

describe('event tags', () => {
  it('keeps valid tags exactly and in order; absent or empty is no tags', () => {
    expect(parseEventTags(['b', 'a', 'Ünïcode 🎉', 'x'.repeat(200)])).toEqual(['b', 'a', 'Ünïcode 🎉', 'x'.repeat(200)]);
    expect(parseEventTags(undefined)).toBeUndefined();
    expect(parseEventTags([])).toBeUndefined();
  });

  it('refuses each broken limit, naming the element', () => {
    expect(fieldOf(() => parseEventTags('a'))).toBe('tags');
    expect(fieldOf(() => parseEventTags(Array.from({ length: 21 }, (_, i) => `t${i}`)))).toBe('tags');
    expect(parseEventTags(Array.from({ length: 20 }, (_, i) => `t${i}`))).toHaveLength(20);
    expect(fieldOf(() => parseEventTags(['a', '']))).toBe('tags[1]');
    expect(fieldOf(() => parseEventTags(['x'.repeat(201)]))).toBe('tags[0]');
    expect(fieldOf(() => parseEventTags(['a', 'b\u0000']))).toBe('tags[1]');
    expect(fieldOf(() => parseEventTags(['a', 'b\n']))).toBe('tags[1]');
    expect(fieldOf(() => parseEventTags(['\u007f']))).toBe('tags[0]');
    expect(fieldOf(() => parseEventTags(['a', 7]))).toBe('tags[1]');
    expect(fieldOf(() => parseEventTags(['a', 'b', 'a'], 'events[1].tags'))).toBe('events[1].tags[2]');
  });
});

describe('DCB queries', () => {
  it('parses items; empty lists constrain nothing; duplicate types collapse', () => {
    expect(parseEventQuery({ items: [{ types: ['A', 'A', 'B'], tags: ['t'] }, {}, { types: [], tags: [] }] })).toEqual({
      items: [{ types: ['A', 'B'], tags: ['t'] }, {}, {}],
    });
  });

  it('refuses an empty, oversized or malformed query, naming the field', () => {
    expect(fieldOf(() => parseQueryItems([]))).toBe('items');
    expect(fieldOf(() => parseQueryItems(Array.from({ length: 21 }, () => ({}))))).toBe('items');
    expect(fieldOf(() => parseQueryItems({}))).toBe('items');
    expect(fieldOf(() => parseQueryItems([{}, { types: ['bad type'] }]))).toBe('items[1].types[0]');
    expect(fieldOf(() => parseQueryItems([{ types: Array.from({ length: 21 }, (_, i) => `T${i}`) }]))).toBe('items[0].types');
    expect(fieldOf(() => parseQueryItems([{ tags: ['a', 'a'] }]))).toBe('items[0].tags[1]');
    expect(fieldOf(() => parseQueryItems([{ tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }]))).toBe('items[0].tags');
    // A misspelt field would otherwise make an item that matches every event.
    expect(fieldOf(() => parseQueryItems([{ tag: ['course:7'] }]))).toBe('items[0].tag');
    expect(fieldOf(() => parseQueryItems([null]))).toBe('items[0]');
    expect(fieldOf(() => parseEventQuery({ items: [{}], extra: 1 }))).toBe('query.extra');
  });

  it('reads the query URL parameter as JSON text', () => {
    expect(parseEventQueryParam(undefined)).toBeUndefined();
    expect(parseEventQueryParam('{"items":[{"tags":["a"]}]}')).toEqual({ items: [{ tags: ['a'] }] });
    expect(fieldOf(() => parseEventQueryParam('{nope'))).toBe('query');
    expect(fieldOf(() => parseEventQueryParam(['{}', '{}']))).toBe('query');
    expect(fieldOf(() => parseEventQueryParam('{"items":[]}'))).toBe('query.items');
  });
});

describe('append conditions', () => {
  it('parses a condition with and without after', () => {
    expect(parseAppendCondition(undefined)).toBeUndefined();
    expect(parseAppendCondition({ failIfEventsMatch: { items: [{ tags: ['c'] }] } })).toEqual({
      failIfEventsMatch: { items: [{ tags: ['c'] }] },
    });
    expect(parseAppendCondition({ failIfEventsMatch: { items: [{}] }, after: 0 })).toEqual({
      failIfEventsMatch: { items: [{}] },
      after: 0,
    });
  });

  it('refuses a bad after, a missing query and unknown fields', () => {
    for (const after of [-1, 1.5, '3', null, Number.MAX_SAFE_INTEGER + 2]) {
      expect(fieldOf(() => parseAppendCondition({ failIfEventsMatch: { items: [{}] }, after }))).toBe('condition.after');
    }
    expect(fieldOf(() => parseAppendCondition({}))).toBe('condition.failIfEventsMatch');
    expect(fieldOf(() => parseAppendCondition({ failIfEventsMatch: { items: [] } }))).toBe('condition.failIfEventsMatch.items');
    expect(fieldOf(() => parseAppendCondition({ failIfEventsMatch: { items: [{}] }, afterPosition: 3 }))).toBe('condition.afterPosition');
    expect(fieldOf(() => parseAppendCondition([]))).toBe('condition');
  });
});
