import { DomainError } from '../common/domain-error';
import { AppendTurns } from './append-turns';

const tick = () => new Promise((r) => setImmediate(r));

describe('AppendTurns', () => {
  it('lets a tenant run up to its limit at once; the rest wait in arrival order and run as turns free up', async () => {
    const turns = new AppendTurns({ inFlightPerTenant: 2, queuedPerTenant: 10 });
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
    const turns = new AppendTurns({ inFlightPerTenant: 1, queuedPerTenant: 10 });
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
    const turns = new AppendTurns({ inFlightPerTenant: 1, queuedPerTenant: 2 });
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
});
