import { DomainError } from '../common/domain-error';
import { AppendTurns } from './append-turns';

const tick = () => new Promise((r) => setImmediate(r));

describe('AppendTurns', () => {
  /** Turns where tenant 'other' appended just now: the limits hold (they hold only while another tenant appends). */
  const contended = (options: { inFlightPerTenant: number; queuedPerTenant: number }) => {
    const turns = new AppendTurns({ ...options, contentionWindowMs: 60_000 });
    (turns.enter('other') as () => void)();
    return turns;
  };

  it('lets a tenant run up to its limit at once; the rest wait in arrival order and run as turns free up', async () => {
    const turns = contended({ inFlightPerTenant: 2, queuedPerTenant: 10 });
    const order: number[] = [];
    const releases: (() => void)[] = [];
    const entering = [1, 2, 3, 4].map(async (n) => {
      const release = await turns.enter('A');
      order.push(n);
      releases.push(release);
    });
    await tick();
    expect(order).toEqual([1, 2]);
    releases[0]();
    await tick();
    expect(order).toEqual([1, 2, 3]);
    releases[1]();
    releases[1](); // a second release of the same turn frees nothing more
    await tick();
    expect(order).toEqual([1, 2, 3, 4]);
    releases.slice(2).forEach((r) => r());
    await Promise.all(entering);
    expect(turns.activeTenants).toBe(0);
  });

  it("never makes one tenant wait on another's turns", async () => {
    const turns = contended({ inFlightPerTenant: 1, queuedPerTenant: 10 });
    await turns.enter('A');
    const waitingA = turns.enter('A');
    let aRan = false;
    void Promise.resolve(waitingA).then(() => (aRan = true));
    const b = turns.enter('B');
    expect(typeof b).toBe('function'); // B's turn is immediate, not a promise
    await tick();
    expect(aRan).toBe(false);
  });

  it('refuses with 429 RATE_LIMITED (policy appends-in-flight) once too many of a tenant wait', async () => {
    const turns = contended({ inFlightPerTenant: 1, queuedPerTenant: 2 });
    await turns.enter('A');
    void turns.enter('A');
    void turns.enter('A');
    let refused: unknown;
    try {
      await turns.enter('A');
    } catch (e) {
      refused = e;
    }
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ code: 'RATE_LIMITED', details: { policy: 'appends-in-flight', retryAfterSeconds: 1 } });
    expect(typeof turns.enter('B')).toBe('function');
  });

  it('holds no one while a tenant appends alone, and holds it once another tenant appends within the window', () => {
    let now = 0;
    const turns = new AppendTurns({ inFlightPerTenant: 1, queuedPerTenant: 10, contentionWindowMs: 1_000 }, () => now);
    // Alone: every request goes on at once.
    expect([1, 2, 3].map(() => typeof turns.enter('A'))).toEqual(['function', 'function', 'function']);
    now = 10;
    (turns.enter('B') as () => void)();
    // B appended within the window: A's next waits.
    expect(turns.enter('A')).toBeInstanceOf(Promise);
    // B's last append is past the window, and nothing of A's waits any more: A goes on at once again.
    now = 2_000;
    const alone = new AppendTurns({ inFlightPerTenant: 1, queuedPerTenant: 10, contentionWindowMs: 1_000 }, () => now);
    (alone.enter('A') as () => void)();
    now = 2_010;
    (alone.enter('B') as () => void)();
    now = 2_010 + 1_500;
    expect(typeof alone.enter('A')).toBe('function');
    expect(typeof alone.enter('A')).toBe('function');
  });

  it('lets the whole queue go once the other tenants have been quiet for a window', async () => {
    let now = 0;
    const turns = new AppendTurns({ inFlightPerTenant: 1, queuedPerTenant: 10, contentionWindowMs: 1_000 }, () => now);
    (turns.enter('B') as () => void)();
    const first = turns.enter('A') as () => void;
    let ran = 0;
    const waiting = [turns.enter('A'), turns.enter('A'), turns.enter('A')].map((p) => Promise.resolve(p).then(() => ran++));
    await tick();
    expect(ran).toBe(0);
    now = 5_000; // B quiet since long: A's release lets all three waiting go, not one.
    first();
    await Promise.all(waiting);
    expect(ran).toBe(3);
  });
});
