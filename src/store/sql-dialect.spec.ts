import { epochMs, sqlTime, sqliteParams } from './sql-dialect';

describe('sql dialect', () => {
  it('binds a time value as epoch milliseconds on SQLite and leaves every other parameter as given', () => {
    const bytes = Buffer.from([0x4d, 0x5a]);
    expect(sqliteParams(['t1', sqlTime(1_700_000_000_123), 5, null, bytes])).toEqual(['t1', 1_700_000_000_123, 5, null, bytes]);
  });

  it('passes parameters without a time value through untouched', () => {
    const params = ['t1', 1, '{"n":1}'];
    expect(sqliteParams(params)).toBe(params);
  });

  it('reads a time column to the same epoch milliseconds from either store', () => {
    expect(epochMs(new Date(1_700_000_000_123))).toBe(1_700_000_000_123);
    expect(epochMs(1_700_000_000_123)).toBe(1_700_000_000_123);
    expect(epochMs(null)).toBeNull();
  });

  it('round-trips a time value through what PostgreSQL is sent and what it answers', () => {
    expect(epochMs(sqlTime(42))).toBe(42);
  });
});
