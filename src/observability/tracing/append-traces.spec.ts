import { AppendTraces } from './append-traces';

const tp = (n: number) => `00-${n.toString(16).padStart(32, '0')}-${'1'.repeat(16)}-01`;

describe('AppendTraces', () => {
  it('finds the append that stored a position, and none between appends or for another tenant', () => {
    const t = new AppendTraces();
    t.remember('a', 1, 3, tp(1));
    t.remember('a', 7, 7, tp(2));
    t.remember('b', 4, 5, tp(3));
    expect([1, 2, 3, 4, 6, 7, 8].map((p) => t.at('a', p))).toEqual([tp(1), tp(1), tp(1), undefined, undefined, tp(2), undefined]);
    expect(t.at('b', 4)).toBe(tp(3));
    expect(t.at('c', 1)).toBeUndefined();
  });

  it('lists the appends a span of positions touches, in position order, even when they were told out of order', () => {
    const t = new AppendTraces();
    t.remember('a', 10, 12, tp(2));
    t.remember('a', 4, 6, tp(1)); // a concurrent commit acknowledged after a later one
    t.remember('a', 20, 20, tp(3));
    expect(t.between('a', 5, 11)).toEqual([tp(1), tp(2)]);
    expect(t.between('a', 7, 9)).toEqual([]);
    expect(t.between('a', 1, 100)).toEqual([tp(1), tp(2), tp(3)]);
    expect(t.of('a', [20, 5, 6, 11])).toEqual([tp(3), tp(1), tp(2)]);
  });

  it('forgets the oldest appends of a tenant, and the tenant appended to least recently, past its limits', () => {
    const t = new AppendTraces({ perTenant: 2, tenants: 2 });
    t.remember('a', 1, 1, tp(1));
    t.remember('a', 2, 2, tp(2));
    t.remember('a', 3, 3, tp(3));
    expect([t.at('a', 1), t.at('a', 2), t.at('a', 3)]).toEqual([undefined, tp(2), tp(3)]);
    t.remember('b', 1, 1, tp(4));
    t.remember('a', 4, 4, tp(5)); // a is now the more recent
    t.remember('c', 1, 1, tp(6));
    expect([t.at('a', 4), t.at('b', 1), t.at('c', 1)]).toEqual([tp(5), undefined, tp(6)]);
  });
});
