import { DomainError } from '../common/domain-error';
import { formatRate, parseOverrides, parseOverrideText, parseRate } from './quota-policy';

describe('quota policy', () => {
  it('reads rates as quota per window, 0 meaning no limit', () => {
    expect(parseRate('20000/10s')).toEqual({ quota: 20_000, windowSeconds: 10 });
    expect(parseRate('60/1h')).toEqual({ quota: 60, windowSeconds: 3600 });
    expect(parseRate('5/m')).toEqual({ quota: 5, windowSeconds: 60 });
    expect(parseRate(' 7 / 1d ')).toEqual({ quota: 7, windowSeconds: 86_400 });
    expect(parseRate('0')).toEqual({ quota: 0, windowSeconds: 1 });
  });

  it('says why a rate is not one', () => {
    expect(parseRate('lots')).toMatch(/not a rate like 20000\/10s/);
    expect(parseRate('5/2y')).toMatch(/not a rate/);
    expect(parseRate('5/0s')).toMatch(/window must be/);
    expect(parseRate('5/2d')).toMatch(/window must be .* to 86400/);
    expect(parseRate('-5/1s')).toMatch(/not a rate/);
  });

  it('writes a rate back in its largest whole unit', () => {
    expect(formatRate({ quota: 60, windowSeconds: 3600 })).toBe('60/1h');
    expect(formatRate({ quota: 100, windowSeconds: 90 })).toBe('100/90s');
    expect(formatRate({ quota: 100, windowSeconds: 120 })).toBe('100/2m');
    expect(formatRate({ quota: 0, windowSeconds: 1 })).toBe('0');
  });

  it('takes overrides as the admin API sends them', () => {
    expect(parseOverrides({ appendRequests: { quota: 10, windowSeconds: 1 }, streams: 3, storedEvents: 0 })).toEqual({
      appendRequests: { quota: 10, windowSeconds: 1 },
      streams: 3,
      storedEvents: 0,
    });
    expect(parseOverrides({})).toEqual({});
  });

  it.each([
    [{ appendRequestz: 5 }, 'appendRequestz'],
    [{ appendRequests: 5 }, 'appendRequests'],
    [{ uploads: { quota: 1.5, windowSeconds: 60 } }, 'uploads'],
    [{ appendEvents: { quota: 10, windowSeconds: 0 } }, 'appendEvents'],
    [{ streams: -1 }, 'streams'],
    [{ webhooksInFlight: '4' }, 'webhooksInFlight'],
  ])('refuses %j naming the field', (input, field) => {
    let err: unknown;
    try {
      parseOverrides(input);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: 'VALIDATION_FAILED', details: { field } });
  });

  it('refuses a body that is not an object of overrides', () => {
    expect(() => parseOverrides([])).toThrow(DomainError);
    expect(() => parseOverrides(null)).toThrow(DomainError);
  });

  it('reads one override in the CLI form', () => {
    expect(parseOverrideText('uploads', '10/1h')).toEqual({ uploads: { quota: 10, windowSeconds: 3600 } });
    expect(parseOverrideText('streams', '20')).toEqual({ streams: 20 });
    expect(() => parseOverrideText('streams', 'twenty')).toThrow(/streams/);
    expect(() => parseOverrideText('appendEvents', '20')).toThrow(/appendEvents/);
    expect(() => parseOverrideText('nope', '20')).toThrow(/not a limit/);
  });
});
