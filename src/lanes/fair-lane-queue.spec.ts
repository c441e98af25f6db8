import { FairLaneQueue } from './fair-lane-queue';
import { LaneRef } from './lane-scheduler.port';

const lane = (tenantId: string, key: string, versionId = 'v1'): LaneRef => ({ tenantId, versionId, key });
const id = (l: LaneRef) => `${l.tenantId}/${l.versionId}/${l.key}`;

function fill(q: FairLaneQueue, lanes: LaneRef[]): void {
  for (const l of lanes) q.push(id(l), l);
}

/** Takes up to n lanes, releasing each at once (as if it ran instantly). */
function order(q: FairLaneQueue, n = Infinity): string[] {
  const out: string[] = [];
  for (let t; out.length < n && (t = q.take());) {
    out.push(t.id);
    q.release(t.lane.tenantId);
  }
  return out;
}

describe('FairLaneQueue', () => {
  it('serves tenants in turn, one lane each, whatever their backlogs', () => {
    const q = new FairLaneQueue(100);
    fill(
      q,
      Array.from({ length: 1000 }, (_, i) => lane('a', `k${i}`)),
    );
    fill(q, [lane('b', 'only'), lane('c', 'x'), lane('c', 'y')]);
    expect(order(q, 7)).toEqual(['a/v1/k0', 'b/v1/only', 'c/v1/x', 'a/v1/k1', 'c/v1/y', 'a/v1/k2', 'a/v1/k3']);
  });

  it('gives a tenant that arrives behind a 100,000-lane backlog the next turn', () => {
    const q = new FairLaneQueue(8);
    fill(
      q,
      Array.from({ length: 100_000 }, (_, i) => lane('big', `k${i}`)),
    );
    const started = Array.from({ length: 8 }, () => q.take()!);
    q.push('small', lane('small', 'one'));
    q.release('big');
    expect(q.take()!.id).toBe('small');
    expect(started.every((s) => s.lane.tenantId === 'big')).toBe(true);
  });

  it('keeps each version of a tenant in FIFO order and lets its versions take turns', () => {
    const q = new FairLaneQueue(100);
    fill(q, [lane('a', '1', 'old'), lane('a', '2', 'old'), lane('a', '3', 'old'), lane('a', 'x', 'new')]);
    expect(order(q)).toEqual(['a/old/1', 'a/new/x', 'a/old/2', 'a/old/3']);
  });

  it('skips a tenant at its cap until one of its lanes is released', () => {
    const q = new FairLaneQueue(2);
    fill(q, [lane('a', '1'), lane('a', '2'), lane('a', '3'), lane('b', '1')]);
    expect(q.take()!.id).toBe('a/v1/1');
    expect(q.take()!.id).toBe('b/v1/1');
    expect(q.take()!.id).toBe('a/v1/2');
    expect(q.inFlight('a')).toBe(2);
    expect(q.take()).toBeUndefined(); // a is at its cap, b has nothing waiting
    q.release('a');
    expect(q.take()!.id).toBe('a/v1/3');
    expect(q.size).toBe(0);
  });

  it('queues a lane once while it waits, and again once it was taken', () => {
    const q = new FairLaneQueue(1);
    expect(q.push('x', lane('a', 'x'))).toBe(true);
    expect(q.push('x', lane('a', 'x'))).toBe(false);
    expect(q.size).toBe(1);
    q.take();
    expect(q.push('x', lane('a', 'x'))).toBe(true);
    expect(q.take()).toBeUndefined();
    q.release('a');
    expect(q.take()!.id).toBe('x');
  });

  it('forgets a tenant once nothing of it waits or runs', () => {
    const q = new FairLaneQueue(4);
    q.push('x', lane('a', 'x'));
    expect(q.delete('x')).toBe(true);
    expect(q.delete('x')).toBe(false);
    expect(q.take()).toBeUndefined();
    expect((q as unknown as { tenants: Map<string, unknown> }).tenants.size).toBe(0);
    q.push('y', lane('a', 'y'));
    q.take();
    q.release('a');
    expect((q as unknown as { tenants: Map<string, unknown> }).tenants.size).toBe(0);
    expect(() => q.release('a')).toThrow(/without a lane in flight/);
  });

  it('takes a lane in constant time however many tenants wait', () => {
    const time = (tenants: number) => {
      const q = new FairLaneQueue(1_000_000);
      for (let t = 0; t < tenants; t++) q.push(`t${t}`, lane(`t${t}`, 'k'));
      for (let i = 0; i < 50_000; i++) q.push(`big${i}`, lane('big', `k${i}`));
      const started = process.hrtime.bigint();
      for (let i = 0; i < 20_000; i++) {
        const t = q.take()!;
        q.release(t.lane.tenantId);
        q.push(t.id, t.lane);
      }
      return Number(process.hrtime.bigint() - started);
    };
    time(10); // warm up
    const few = Math.min(time(10), time(10));
    const many = Math.min(time(20_000), time(20_000));
    expect(many / few).toBeLessThan(5);
  });
});
