import { compareStates, DIFF_SAMPLE, FailureBook, RemovedKeys, removedFrom } from './dry-run-report';

const states = (o: Record<string, unknown>) => new Map(Object.entries(o).map(([k, v]) => [k, JSON.stringify(v)]));

describe('compareStates (the candidate against the live states)', () => {
  it('counts added, removed, changed and unchanged keys, and diffs the differing ones in key order', () => {
    const live = states({ a: { n: 1 }, b: { n: 2 }, gone: { n: 3 } });
    const candidate = states({ a: { n: 1 }, b: { n: 5 }, new: { n: 9 } });
    const { keys, diffs } = compareStates(candidate, live, { removed: removedFrom(live, candidate, new Set()), held: new Set() });
    expect(keys).toEqual({ added: 1, removed: 1, changed: 1, unchanged: 1, held: 0 });
    expect(diffs).toEqual([
      { key: 'b', change: 'changed', patch: [{ op: 'replace', path: '/n', value: 5 }] },
      { key: 'gone', change: 'removed', patch: [{ op: 'remove', path: '' }] },
      { key: 'new', change: 'added', patch: [{ op: 'add', path: '', value: { n: 9 } }] },
    ]);
  });

  it('on a partial run counts no live key as removed', () => {
    const { keys } = compareStates(states({ a: 1 }), states({ a: 1, b: 2 }), { removed: null, held: new Set() });
    expect(keys).toEqual({ added: 0, removed: 0, changed: 0, unchanged: 1, held: 0 });
  });

  it('leaves held keys out of the comparison and counts them apart', () => {
    const [candidate, live, held] = [states({ a: 1, h: 2 }), states({ a: 1, h: 3 }), new Set(['h'])];
    const { keys, diffs } = compareStates(candidate, live, { removed: removedFrom(live, candidate, held), held });
    expect(keys).toEqual({ added: 0, removed: 0, changed: 0, unchanged: 1, held: 1 });
    expect(diffs).toEqual([]);
  });

  it(`carries at most ${DIFF_SAMPLE} diffs, the counts still whole`, () => {
    const candidate = new Map(Array.from({ length: 50 }, (_, i) => [`k${String(i).padStart(2, '0')}`, `{"i":${i}}`]));
    const { keys, diffs } = compareStates(candidate, new Map(), { removed: new RemovedKeys(), held: new Set() });
    expect(keys.added).toBe(50);
    expect(diffs.map((d) => d.key)).toEqual([...candidate.keys()].slice(0, DIFF_SAMPLE));
  });

  it('counts every removed key but keeps only the first few, in key order, for the diffs', () => {
    const removed = new RemovedKeys();
    for (let i = 999; i >= 0; i--) removed.add(`r${String(i).padStart(3, '0')}`);
    const { keys, diffs } = compareStates(new Map(), new Map(), { removed, held: new Set() });
    expect(keys.removed).toBe(1000);
    expect(diffs.map((d) => d.key)).toEqual(Array.from({ length: DIFF_SAMPLE }, (_, i) => `r${String(i).padStart(3, '0')}`));
  });

  it('calls a key unchanged only when its text is the same', () => {
    const { keys } = compareStates(new Map([['a', '{"n":1.50}']]), new Map([['a', '{"n":1.5}']]), {
      removed: new RemovedKeys(),
      held: new Set(),
    });
    expect(keys.changed).toBe(1);
  });
});

describe('FailureBook', () => {
  it('groups failures by event type, keeping the count and the first failing event of each', () => {
    const book = new FailureBook();
    const ev = (eventId: string, position: number) => ({
      eventId,
      position,
      aggregateId: 'a',
      key: 'k',
      code: 'APPLY_FAILED',
      message: 'x',
    });
    book.record('Refunded', ev('e1', 3));
    book.record('Shipped', ev('e2', 4));
    book.record('Refunded', ev('e3', 7));
    expect(book.list()).toEqual([
      { eventType: 'Refunded', count: 2, first: ev('e1', 3) },
      { eventType: 'Shipped', count: 1, first: ev('e2', 4) },
    ]);
  });
});
