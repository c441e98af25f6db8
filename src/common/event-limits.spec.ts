import { FALLBACK_AGGREGATE_TYPE, inferAggregateType, jsonDepthExceeds } from './event-limits';

describe('inferAggregateType', () => {
  it('takes the part before the first dash', () => {
    expect(inferAggregateType('order-42-a')).toBe('order');
  });
  it('takes the whole id when there is no dash', () => {
    expect(inferAggregateType('singleton')).toBe('singleton');
  });
  it('maps characters a type may not hold, one per code point', () => {
    expect(inferAggregateType('a:b@c')).toBe('a_b_c');
    expect(inferAggregateType('compte-é-ü-日本')).toBe('compte');
    expect(inferAggregateType('acct/42')).toBe('acct_42');
    expect(inferAggregateType('acct 42')).toBe('acct_42');
    expect(inferAggregateType('a\u{1F600}')).toBe('a_');
  });
  it('falls back to a fixed type when the head would not be a valid type', () => {
    for (const id of ['日本-1', '\u{1F600}', '-x', ' a', '_a']) expect(inferAggregateType(id)).toBe(FALLBACK_AGGREGATE_TYPE);
  });
});

describe('jsonDepthExceeds', () => {
  const nest = (n: number): unknown => {
    let v: unknown = {};
    for (let i = 1; i < n; i++) v = { a: [v] };
    return v;
  };
  it('counts objects and arrays', () => {
    expect(jsonDepthExceeds({ a: [1, { b: 2 }] }, 3)).toBe(false);
    expect(jsonDepthExceeds({ a: [1, { b: {} }] }, 3)).toBe(true);
  });
  it('survives nesting far deeper than the stack', () => {
    let v: unknown = 1;
    for (let i = 0; i < 200_000; i++) v = [v];
    expect(jsonDepthExceeds(v, 32)).toBe(true);
    expect(jsonDepthExceeds(nest(10), 32)).toBe(false);
  });
});
