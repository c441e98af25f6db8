import { DomainError } from '../common/domain-error';
import { parseDirection, parseLogFilters, parseTypeList } from './log-query';

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

  it('knows two directions, forward by default', () => {
    expect(parseDirection(undefined)).toBe('forward');
    expect(parseDirection('')).toBe('forward');
    expect(parseDirection('backward')).toBe('backward');
    expect(fieldOf(() => parseDirection('Backward'))).toBe('direction');
    expect(fieldOf(() => parseDirection(['backward', 'forward']))).toBe('direction');
  });
});
