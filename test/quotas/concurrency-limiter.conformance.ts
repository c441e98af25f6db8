import { randomUUID } from 'node:crypto';
import { ConcurrencyLimiter } from '../../src/quotas/concurrency-limiter.port';
import { elapse } from '../support/wait';

export interface ConcurrencyLimiterHarness {
  create(): Promise<ConcurrencyLimiter>;
  /** Another instance's limiter sharing the first one's counts (Redis); absent where counts are per instance. */
  sibling?: (of: ConcurrencyLimiter) => Promise<ConcurrencyLimiter>;
}

/** One suite, every adapter: what counted slots promise, against the real backend. */
export function testConcurrencyLimiter(name: string, harness: ConcurrencyLimiterHarness): void {
  describe(`${name} concurrency limiter conformance`, () => {
    let limiter: ConcurrencyLimiter;
    const others: ConcurrencyLimiter[] = [];
    let key: string;
    beforeEach(async () => {
      limiter = await harness.create();
      key = `t-${randomUUID()}:streams`;
    });
    afterEach(async () => {
      for (const o of others.splice(0)) await o.close();
      await limiter.close();
    });

    it('grants up to the limit, refuses past it, and grants again once a slot is given back', async () => {
      const a = await limiter.acquire(key, 2);
      const b = await limiter.acquire(key, 2);
      expect([a.granted, a.held, b.granted, b.held]).toEqual([true, 1, true, 2]);
      expect(await limiter.acquire(key, 2)).toMatchObject({ granted: false, held: 2 });
      a.release();
      expect(await limiter.acquire(key, 2)).toMatchObject({ granted: true, held: 2 });
    });

    it('gives a slot back once however often it is released, and a refused one not at all', async () => {
      const a = await limiter.acquire(key, 2);
      await limiter.acquire(key, 2);
      const refused = await limiter.acquire(key, 2);
      refused.release();
      a.release();
      a.release();
      await elapse(20, 'a Redis release is sent, not awaited (acquiring to look would take the slot)');
      expect(await limiter.acquire(key, 2)).toMatchObject({ granted: true, held: 2 });
      expect(await limiter.acquire(key, 2)).toMatchObject({ granted: false });
    });

    it('keeps keys apart', async () => {
      await limiter.acquire(key, 1);
      expect(await limiter.acquire(key, 1)).toMatchObject({ granted: false });
      expect(await limiter.acquire(`${key}-other`, 1)).toMatchObject({ granted: true });
    });

    it('never grants more than the limit to acquires arriving together', async () => {
      const grants = await Promise.all(Array.from({ length: 50 }, () => limiter.acquire(key, 7)));
      expect(grants.filter((g) => g.granted)).toHaveLength(7);
    });

    if (harness.sibling) {
      const sibling = harness.sibling;
      it('counts the slots of every instance together', async () => {
        const other = await sibling(limiter);
        others.push(other);
        const mine = await limiter.acquire(key, 3);
        await limiter.acquire(key, 3);
        expect(await other.acquire(key, 3)).toMatchObject({ granted: true, held: 3 });
        expect(await other.acquire(key, 3)).toMatchObject({ granted: false });
        mine.release();
        await elapse(20, 'a Redis release is sent, not awaited (acquiring to look would take the slot)');
        expect(await other.acquire(key, 3)).toMatchObject({ granted: true });
      });

      it('gives an instance’s slots back when it closes', async () => {
        const other = await sibling(limiter);
        await other.acquire(key, 2);
        await other.acquire(key, 2);
        expect(await limiter.acquire(key, 2)).toMatchObject({ granted: false });
        await other.close();
        expect(await limiter.acquire(key, 2)).toMatchObject({ granted: true });
      });
    }
  });
}
