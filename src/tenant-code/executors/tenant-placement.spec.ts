import { QuarantineBook, rendezvousSlot } from './tenant-placement';

const ids = (n: number) =>
  Array.from({ length: n }, (_, i) => `0190f${i.toString(16).padStart(3, '0')}-7c1e-7000-8000-${String(i).padStart(12, '0')}`);

describe('rendezvousSlot', () => {
  it('places a tenant on the same slot every time', () => {
    for (const id of ids(100)) expect(rendezvousSlot(id, 8)).toBe(rendezvousSlot(id, 8));
  });

  it('spreads tenants evenly over the slots', () => {
    const counts = new Array(8).fill(0);
    for (const id of ids(16_000)) counts[rendezvousSlot(id, 8)]++;
    for (const c of counts) expect(Math.abs(c - 2_000)).toBeLessThan(300);
  });

  it('moves only the tenants the new slot takes when the pool grows', () => {
    const all = ids(9_000);
    const moved = all.filter((id) => rendezvousSlot(id, 8) !== rendezvousSlot(id, 9));
    // Each moved tenant went to the new slot; about 1/9 of them moved.
    expect(moved.every((id) => rendezvousSlot(id, 9) === 8)).toBe(true);
    expect(moved.length / all.length).toBeGreaterThan(0.08);
    expect(moved.length / all.length).toBeLessThan(0.15);
  });

  it('has one slot to give when there is one', () => {
    expect(rendezvousSlot('any', 1)).toBe(0);
  });
});

describe('QuarantineBook', () => {
  let now = 1_000_000;
  const book = () => new QuarantineBook({ baseMs: 1_000, maxMs: 8_000 }, () => now);

  it('keeps an offender apart for the base stay, then lets it go', () => {
    const b = book();
    expect(b.quarantinedUntil('t')).toBeUndefined();
    expect(b.offend('t')).toEqual({ until: now + 1_000, strikes: 1 });
    expect(b.quarantinedUntil('t')).toBe(now + 1_000);
    now += 1_001;
    expect(b.quarantinedUntil('t')).toBeUndefined();
    expect(b.quarantinedUntil('other')).toBeUndefined();
  });

  it('doubles the stay of a repeat offender up to the cap', () => {
    const b = book();
    const stays = [1, 2, 3, 4, 5, 6].map(() => {
      const { until } = b.offend('t');
      const stay = until - now;
      now = until + 10;
      return stay;
    });
    expect(stays).toEqual([1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
  });

  it('never shortens a stay already given', () => {
    const b = book();
    b.offend('t');
    b.offend('t');
    const { until } = b.offend('t');
    expect(until).toBe(now + 4_000);
  });

  it('forgets an offender quiet for twice the cap', () => {
    const b = book();
    b.offend('t');
    b.offend('t');
    now += 16_001;
    b.prune();
    expect(b.size).toBe(0);
    expect(b.offend('t').strikes).toBe(1);
  });
});
