import { LaneKeyCap } from './lane-key-cap';

/** Lanes of one version in memory: what the store would answer. */
function lanesOf(initial: string[]) {
  const lanes = new Set(initial);
  const calls = { existing: 0, count: 0 };
  const repo = {
    existingKeys: async (_version: unknown, keys: string[]) => {
      calls.existing++;
      return new Set(keys.filter((k) => lanes.has(k)));
    },
    keyCount: async () => {
      calls.count++;
      return [...lanes].filter((k) => k !== '!unresolved').length;
    },
  };
  return { lanes, calls, repo };
}

const items = (keys: string[], from = 1) => keys.map((key, i) => ({ key, position: from + i }));

describe('LaneKeyCap', () => {
  it('moves events for new keys past the limit to !unresolved, with KEY_LIMIT, and lets known keys go on', async () => {
    const { repo } = lanesOf(['a', 'b']);
    const cap = new LaneKeyCap(repo, { keysPerProjection: async () => 3 });
    const r = await cap.admit('t', 'v', items(['a', 'c', 'd', 'b', 'd', 'e']));
    expect(r.items.map((i) => i.key)).toEqual(['a', 'c', '!unresolved', 'b', '!unresolved', '!unresolved']);
    expect(r.refused).toEqual({ position: 3, error: expect.stringMatching(/^KEY_LIMIT: .*3 state keys/) });
  });

  it('asks the store nothing per batch far from the limit, and counts again near it', async () => {
    let now = 0;
    const { repo, calls, lanes } = lanesOf([]);
    const cap = new LaneKeyCap(repo, { keysPerProjection: async () => 100 }, () => now);
    for (let i = 0; i < 10; i++) {
      const batch = items([`k${i}`, 'shared']);
      (await cap.admit('t', 'v', batch)).items.forEach((it) => lanes.add(it.key));
    }
    expect(calls).toEqual({ existing: 0, count: 1 }); // the first batch's count, then the upper bound
    now = 6_000; // past the recount period
    await cap.admit('t', 'v', items(['x']));
    expect(calls.count).toBe(2);
  });

  it('passes everything when the limit is 0 (no limit)', async () => {
    const { repo, calls } = lanesOf(Array.from({ length: 50 }, (_, i) => `k${i}`));
    const cap = new LaneKeyCap(repo, { keysPerProjection: async () => 0 });
    const r = await cap.admit('t', 'v', items(['new-1', 'new-2']));
    expect(r).toEqual({ items: items(['new-1', 'new-2']), refused: null });
    expect(calls).toEqual({ existing: 0, count: 0 });
  });
});
