import { IntQueryPipe } from './int-query.pipe';

function refusal(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('IntQueryPipe', () => {
  it('gives the absent value for a missing or empty parameter', () => {
    expect(new IntQueryPipe('minPosition', undefined).transform(undefined)).toBeUndefined();
    expect(new IntQueryPipe('limit', 100, 1, 1000).transform('')).toBe(100);
  });

  it('reads digits within the bounds', () => {
    expect(new IntQueryPipe('limit', 100, 1, 1000).transform('7')).toBe(7);
    expect(new IntQueryPipe('minPosition', undefined).transform('0')).toBe(0);
  });

  it('refuses anything else with VALIDATION_FAILED naming the parameter', () => {
    expect(refusal(() => new IntQueryPipe('minPosition', undefined).transform('x'))).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: { field: 'minPosition' },
    });
    expect(refusal(() => new IntQueryPipe('limit', 100, 1, 1000).transform('0'))).toMatchObject({
      code: 'VALIDATION_FAILED',
      message: 'limit: must be between 1 and 1000',
    });
    expect(refusal(() => new IntQueryPipe('limit', 100, 1, 1000).transform('1e3'))).toMatchObject({
      message: 'limit: must be a non-negative integer',
    });
  });
});
