import { takeTokens, tokensAt } from './token-bucket';

const policy = { quota: 10, windowSeconds: 5 }; // 2 tokens a second, at most 10

describe('token bucket', () => {
  it('starts full and admits up to the quota at once, then refuses saying when to come back', () => {
    let state;
    for (let i = 0; i < 10; i++) {
      const r = takeTokens(state, policy, 1, 1_000);
      expect(r.decision).toMatchObject({ allowed: true, remaining: 9 - i });
      state = r.state;
    }
    const refused = takeTokens(state, policy, 1, 1_000);
    expect(refused.decision).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 0.5, resetSeconds: 5 });
  });

  it('refills at quota per window, never above the quota', () => {
    const { state } = takeTokens(undefined, policy, 10, 0);
    expect(tokensAt(state, policy, 1_000)).toBeCloseTo(2);
    expect(tokensAt(state, policy, 60_000)).toBe(10);
    expect(takeTokens(state, policy, 2, 1_000).decision.allowed).toBe(true);
    expect(takeTokens(state, policy, 3, 1_000).decision).toMatchObject({ allowed: false, retryAfterSeconds: 0.5 });
  });

  it('counts n units at once and refuses a request the bucket cannot cover, taking nothing', () => {
    const first = takeTokens(undefined, policy, 7, 0);
    expect(first.decision).toMatchObject({ allowed: true, remaining: 3 });
    const refused = takeTokens(first.state, policy, 4, 0);
    expect(refused.decision.allowed).toBe(false);
    expect(takeTokens(refused.state, policy, 3, 0).decision).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('admits a request larger than the quota from a full bucket only, leaving a debt the rate pays back', () => {
    const big = takeTokens(undefined, policy, 25, 0);
    expect(big.decision).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 12.5 });
    // 15 tokens owed: one more token needs 16 of refill, 8 s at 2/s.
    expect(takeTokens(big.state, policy, 1, 0).decision).toMatchObject({ allowed: false, retryAfterSeconds: 8 });
    expect(takeTokens(big.state, policy, 25, 7_000).decision.allowed).toBe(false);
    expect(takeTokens(big.state, policy, 25, 12_500).decision.allowed).toBe(true);
  });

  it('clamps what a bucket holds to a tightened quota', () => {
    const { state } = takeTokens(undefined, policy, 1, 0);
    const tighter = { quota: 3, windowSeconds: 5 };
    expect(takeTokens(state, tighter, 1, 0).decision).toMatchObject({ allowed: true, remaining: 2 });
  });
});
