import { takeTurns } from './take-turns';

describe('takeTurns', () => {
  it('takes one of each list per round, so a long list does not crowd out the short ones', () => {
    const long = Array.from({ length: 1000 }, (_, i) => `a${i}`);
    expect(takeTurns([long, ['b0'], ['c0', 'c1']], 6)).toEqual(['a0', 'b0', 'c0', 'a1', 'c1', 'a2']);
  });

  it('stops at the limit, or when every list is used up', () => {
    expect(takeTurns([[1, 2], [3]], 2)).toEqual([1, 3]);
    expect(takeTurns([[1, 2], [3]], 10)).toEqual([1, 3, 2]);
    expect(takeTurns([[], []], 10)).toEqual([]);
    expect(takeTurns([[1]], 0)).toEqual([]);
  });
});
