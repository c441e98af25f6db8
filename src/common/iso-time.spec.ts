import { isoTime } from './iso-time';

describe('isoTime', () => {
  it('formats each time, also when the same time comes again after another', () => {
    expect(isoTime(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(isoTime(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(isoTime(1_700_000_000_123)).toBe('2023-11-14T22:13:20.123Z');
    expect(isoTime(0)).toBe('1970-01-01T00:00:00.000Z');
  });

  it('still refuses an invalid time, and remembers nothing from it', () => {
    expect(isoTime(5)).toBe('1970-01-01T00:00:00.005Z');
    expect(() => isoTime(NaN)).toThrow(RangeError);
    expect(() => isoTime(8.64e15 + 1)).toThrow(RangeError);
    expect(isoTime(5)).toBe('1970-01-01T00:00:00.005Z');
  });
});
