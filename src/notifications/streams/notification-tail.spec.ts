import { Notification } from '../log/notification';
import { NotificationTail, TAIL_TTL_MS } from './notification-tail';

const n = (sequence: number): Notification => ({
  sequence,
  projectionId: 'p',
  aggregateId: `a-${sequence}`,
  aggregateType: 'a',
  stateKey: 'k',
  version: 1,
  position: sequence,
  state: '{}',
  timestamp: 0,
});

/** A store log of `head` notifications, counting reads. */
function store(head: { value: number }) {
  const calls: [number, number][] = [];
  const read = async (_t: string, _p: string, after: number, limit: number) => {
    calls.push([after, limit]);
    await new Promise((r) => setImmediate(r));
    const out: Notification[] = [];
    for (let s = after + 1; s <= Math.min(head.value, after + limit); s++) out.push(n(s));
    return out;
  };
  return { read, calls };
}

describe('NotificationTail', () => {
  it('serves a row from memory for TAIL_TTL_MS only, then reads the store again (an erasure rewrites states)', async () => {
    const head = { value: 5 };
    const s = store(head);
    let now = 1_000;
    const tail = new NotificationTail(s.read, () => now);
    await tail.read('t', 'p', 0, 100);
    now += TAIL_TTL_MS - 1;
    await tail.read('t', 'p', 2, 2);
    expect(s.calls).toHaveLength(1); // still fresh: from memory
    now += 2;
    expect((await tail.read('t', 'p', 2, 2)).map((x) => x.sequence)).toEqual([3, 4]);
    expect(s.calls).toEqual([
      [0, 100],
      [2, 2],
    ]);
  });

  it('serves many readers at the same cursor with one store read, then from memory', async () => {
    const head = { value: 10 };
    const s = store(head);
    const tail = new NotificationTail(s.read);
    const pages = await Promise.all(Array.from({ length: 100 }, () => tail.read('t', 'p', 4, 200)));
    for (const p of pages) expect(p.map((x) => x.sequence)).toEqual([5, 6, 7, 8, 9, 10]);
    expect(s.calls).toEqual([[4, 200]]);
    // A reader further along within what is kept: memory, same objects (serialized once).
    expect((await tail.read('t', 'p', 7, 2)).map((x) => x.sequence)).toEqual([8, 9]);
    expect((await tail.read('t', 'p', 7, 2))[0]).toBe(pages[0][3]);
    expect(s.calls).toHaveLength(1);
  });

  it('reads the store at the tail end and for readers behind what is kept, and grows contiguously', async () => {
    const head = { value: 3 };
    const s = store(head);
    const tail = new NotificationTail(s.read);
    expect((await tail.read('t', 'p', 0, 10)).map((x) => x.sequence)).toEqual([1, 2, 3]);
    expect(await tail.read('t', 'p', 3, 10)).toEqual([]); // nothing new: asks the store
    head.value = 5;
    expect((await tail.read('t', 'p', 3, 10)).map((x) => x.sequence)).toEqual([4, 5]);
    expect((await tail.read('t', 'p', 1, 10)).map((x) => x.sequence)).toEqual([2, 3, 4, 5]); // kept: 1..5
    expect(s.calls).toEqual([
      [0, 10],
      [3, 10],
      [3, 10],
    ]);
    // Another projection or tenant never shares a tail.
    expect((await tail.read('t2', 'p', 1, 10)).map((x) => x.sequence)).toEqual([2, 3, 4, 5]);
    expect(s.calls).toHaveLength(4);
  });

  it('keeps a bounded number of rows, and a failed read fails its readers without poisoning the next', async () => {
    const head = { value: 2_000 };
    const s = store(head);
    const tail = new NotificationTail(s.read);
    await tail.read('t', 'p', 0, 1_000);
    await tail.read('t', 'p', 1_000, 1_000);
    await tail.read('t', 'p', 1_500, 10); // within the newest 512: memory
    expect(s.calls).toHaveLength(2);
    await tail.read('t', 'p', 100, 10); // long gone from memory: the store
    expect(s.calls).toHaveLength(3);

    let fail = true;
    const flaky = new NotificationTail(async (...a) => {
      if (fail) throw new Error('store down');
      return s.read(...a);
    });
    await expect(Promise.all([flaky.read('t', 'p', 0, 5), flaky.read('t', 'p', 0, 5)])).rejects.toThrow('store down');
    fail = false;
    expect((await flaky.read('t', 'p', 0, 5)).map((x) => x.sequence)).toEqual([1, 2, 3, 4, 5]);
  });
});
