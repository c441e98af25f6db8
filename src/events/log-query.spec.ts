import { DomainError } from '../common/domain-error';
import { EventQueryParamPipe, parseDirection, parseLogFilters, parseTypeList } from './log-query';

const fieldOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (e) {
    return e instanceof DomainError && e.code === 'VALIDATION_FAILED' ? (e.details.field as string) : 'not a validation error';
  }
  return undefined;
};

describe('the log query words', () => {
  it('splits a comma-separated list, keeping each value once, in order', () => {
    expect(parseTypeList('eventType', 'B,A,B')).toEqual(['B', 'A']);
    expect(parseTypeList('eventType', 'order:placed/v2+x')).toEqual(['order:placed/v2+x']);
    expect(parseTypeList('aggregateType', undefined)).toBeUndefined();
    expect(parseLogFilters({ aggregateType: 'a', eventType: undefined })).toEqual({ aggregateTypes: ['a'] });
    expect(parseLogFilters({})).toEqual({});
    expect(parseTypeList('eventType', ['A', 'B,C', 'A'])).toEqual(['A', 'B', 'C']); // given more than once: one list
  });

  it('refuses an empty list, an empty value, an invalid value and more than 20 values', () => {
    expect(fieldOf(() => parseTypeList('aggregateType', ''))).toBe('aggregateType');
    expect(fieldOf(() => parseTypeList('aggregateType', 'a,'))).toBe('aggregateType');
    expect(fieldOf(() => parseTypeList('aggregateType', 'a:b'))).toBe('aggregateType'); // ':' is an event type character only
    expect(fieldOf(() => parseTypeList('eventType', 'x'.repeat(201)))).toBe('eventType');
    expect(fieldOf(() => parseTypeList('eventType', Array.from({ length: 21 }, (_, i) => `e${i}`).join(',')))).toBe('eventType');
    expect(parseTypeList('eventType', Array.from({ length: 20 }, (_, i) => `e${i}`).join(','))).toHaveLength(20);
  });

  it('reads `query` as the JSON text of a DCB query, AND-ed with the lists; a bad one names its element', () => {
    const query = { items: [{ types: ['Subscribed'], tags: ['course:7'] }, { tags: ['student:bob'] }] };
    expect(parseLogFilters({ eventType: 'Subscribed', query: JSON.stringify(query) })).toEqual({ eventTypes: ['Subscribed'], query });
    expect(new EventQueryParamPipe().transform(JSON.stringify(query))).toEqual(query);
    expect(new EventQueryParamPipe().transform(undefined)).toBeUndefined();
    expect(parseLogFilters({ query: undefined })).toEqual({});
    expect(fieldOf(() => parseLogFilters({ query: 'nope' }))).toBe('query');
    expect(fieldOf(() => parseLogFilters({ query: [JSON.stringify(query), JSON.stringify(query)] }))).toBe('query');
    expect(fieldOf(() => parseLogFilters({ query: '{"items":[]}' }))).toBe('query.items');
    expect(fieldOf(() => parseLogFilters({ query: '{"items":[{"tags":["a","\\u0007"]}]}' }))).toBe('query.items[0].tags[1]');
    expect(fieldOf(() => new EventQueryParamPipe().transform('{"items":[{"types":["a b"]}]}'))).toBe('query.items[0].types[0]');
  });

  it('knows two directions, forward by default', () => {
    expect(parseDirection(undefined)).toBe('forward');
    expect(parseDirection('')).toBe('forward');
    expect(parseDirection('backward')).toBe('backward');
    expect(fieldOf(() => parseDirection('Backward'))).toBe('direction');
    expect(fieldOf(() => parseDirection(['backward', 'forward']))).toBe('direction');
  });
});
