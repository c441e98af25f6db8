import { KeySample, parseDryRunOptions } from './dry-run-options';

const LIMITS = { maxEvents: 1000, maxKeys: 100, maxStateBytes: 1 << 20, maxDurationMs: 10_000 };

describe('parseDryRunOptions', () => {
  it('defaults to the whole history within the configured limits', () => {
    expect(parseDryRunOptions({}, LIMITS)).toEqual({
      maxEvents: 1000,
      fromPosition: 1,
      toPosition: null,
      keys: null,
      sampleKeys: null,
      className: null,
    });
  });

  it('reads a range, a key list (JSON or comma-separated) and a class', () => {
    expect(parseDryRunOptions({ fromPosition: '5', toPosition: '9', keys: 'a, b', className: 'P', maxEvents: '10' }, LIMITS)).toEqual({
      maxEvents: 10,
      fromPosition: 5,
      toPosition: 9,
      keys: ['a', 'b'],
      sampleKeys: null,
      className: 'P',
    });
    expect(parseDryRunOptions({ keys: '["x,y"]' }, LIMITS).keys).toEqual(['x,y']);
  });

  it.each([
    [{ maxEvents: '1001' }, 'maxEvents'],
    [{ maxEvents: '-1' }, 'maxEvents'],
    [{ fromPosition: '9', toPosition: '3' }, 'toPosition'],
    [{ keys: '[1]' }, 'keys'],
    [{ keys: 'a', sampleKeys: '2' }, 'sampleKeys'],
    [{ sampleKeys: '101' }, 'sampleKeys'],
  ])('refuses %j naming %s', (fields, field) => {
    expect(() => parseDryRunOptions(fields as Record<string, string>, LIMITS)).toThrow(
      expect.objectContaining({ code: 'VALIDATION_FAILED' }),
    );
    try {
      parseDryRunOptions(fields as Record<string, string>, LIMITS);
    } catch (e: any) {
      expect(JSON.stringify(e.details) + e.message).toContain(field);
    }
  });
});

describe('KeySample', () => {
  it('admits the first n keys met, and those again', () => {
    const s = new KeySample({ keys: null, sampleKeys: 2 });
    expect(['a', 'b', 'c', 'a', 'b'].map((k) => s.admits(k))).toEqual([true, true, false, true, true]);
    expect(s.all).toBe(false);
  });

  it('admits only the keys asked for, or every key', () => {
    const only = new KeySample({ keys: ['b'], sampleKeys: null });
    expect(['a', 'b'].map((k) => only.admits(k))).toEqual([false, true]);
    expect(new KeySample({ keys: null, sampleKeys: null }).all).toBe(true);
  });
});
