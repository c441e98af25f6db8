import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import { connectQuotaRedis } from '../../src/quotas/quota-redis';
import { RedisCircuit } from '../../src/quotas/redis-circuit';
import { RedisConcurrencyLimiter } from '../../src/quotas/redis-concurrency-limiter';
import { RedisRateLimiter } from '../../src/quotas/redis-rate-limiter';
import { ThrowawayRedis } from '../support/throwaway-redis';
import { testConcurrencyLimiter } from './concurrency-limiter.conformance';
import { testRateLimiter } from './rate-limiter.conformance';
import { elapse } from '../support/wait';

let server: ThrowawayRedis;
/** Every connection a test opened (one per simulated instance), closed after the file. */
const connections: Redis[] = [];

async function connection(): Promise<{ redis: Redis; circuit: RedisCircuit }> {
  const c = await connectQuotaRedis(server.url);
  connections.push(c.redis);
  return c;
}

beforeAll(async () => {
  server = await ThrowawayRedis.start();
}, 60_000);
afterAll(async () => {
  await Promise.all(
    connections
      .filter((c) => c.status !== 'end')
      .map((c) => (c.status === 'ready' ? c.quit().catch(() => c.disconnect()) : c.disconnect())),
  );
  await server?.stop();
});

const rateLimiter = async () => {
  const c = await connection();
  return new RedisRateLimiter(c.redis, { circuit: c.circuit });
};
const slotLimiter = async (ttlMs?: number) => {
  const c = await connection();
  return new RedisConcurrencyLimiter(c.redis, { circuit: c.circuit, ttlMs });
};

testRateLimiter('redis', { create: rateLimiter, sibling: rateLimiter });
testConcurrencyLimiter('redis', { create: () => slotLimiter(), sibling: () => slotLimiter() });

describe('redis quota backends', () => {
  it('spends leased tokens in memory: a fast policy costs a round trip per lease, not per request', async () => {
    const limiter = await rateLimiter();
    const p = { quota: 20_000, windowSeconds: 10 }; // 2,000/s: leases of 100
    for (let i = 0; i < 1000; i++) expect((await limiter.take('lease-key', p, 1)).allowed).toBe(true);
    expect(limiter.roundTrips).toBeLessThanOrEqual(11);
    // A slow policy (uploads per hour) leases nothing: every request asks Redis, so another instance sees it at once.
    const before = limiter.roundTrips;
    await limiter.take('slow-key', { quota: 60, windowSeconds: 3600 }, 1);
    await limiter.take('slow-key', { quota: 60, windowSeconds: 3600 }, 1);
    expect(limiter.roundTrips - before).toBe(2);
    await limiter.close();
  });

  it('frees the slots of an instance that died without giving them back, after their TTL', async () => {
    const key = `t-${randomUUID()}:streams`;
    const dying = await slotLimiter(400);
    const survivor = await slotLimiter(400);
    expect(await dying.acquire(key, 1)).toMatchObject({ granted: true });
    // The instance vanishes: no release, no more refreshes.
    connections[connections.length - 2].disconnect();
    expect(await survivor.acquire(key, 1)).toMatchObject({ granted: false });
    await elapse(700, "the vanished instance's slot expires: its TTL runs out unrefreshed");
    expect(await survivor.acquire(key, 1)).toMatchObject({ granted: true });
    await survivor.close();
  });

  it('keeps a live slot counted across a Redis flush: the next refresh puts it back', async () => {
    const key = `t-${randomUUID()}:streams`;
    const a = await slotLimiter(300);
    const b = await slotLimiter(300);
    expect(await a.acquire(key, 1)).toMatchObject({ granted: true });
    await server.flushAll();
    await elapse(250, 'a refresh every ttl/3: the flushed slot is written back');
    expect(await b.acquire(key, 1)).toMatchObject({ granted: false });
    await a.close();
    await b.close();
  });

  it('decides per instance, without waiting, while Redis is unreachable, and shares again once it is back', async () => {
    const key = `t-${randomUUID()}:appends`;
    const p = { quota: 3, windowSeconds: 600 };
    const limiter = await rateLimiter();
    const slots = await slotLimiter();
    await server.down();
    try {
      const started = Date.now();
      // The local bucket: the whole quota, then refusals; no request waits on the dead connection.
      const results = [];
      for (let i = 0; i < 5; i++) results.push((await limiter.take(key, p, 1)).allowed);
      expect(results).toEqual([true, true, true, false, false]);
      expect(await slots.acquire(key, 1)).toMatchObject({ granted: true });
      expect(await slots.acquire(key, 1)).toMatchObject({ granted: false });
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      await server.up();
    }
    // Back: once ioredis has reconnected and the circuit's pause is over, decisions are Redis's again.
    const admin = (await connection()).redis;
    const deadline = Date.now() + 15_000;
    let sharedKey = '';
    for (let i = 0; !sharedKey && Date.now() < deadline; i++) {
      await elapse(200, 'poll interval: until Redis is back');
      await limiter.take(`${key}-after-${i}`, p, 1);
      if (await admin.exists(`es:quota:bucket:${key}-after-${i}`).catch(() => 0)) sharedKey = `${key}-after-${i}`;
    }
    expect(sharedKey).not.toBe('');
    const other = await rateLimiter();
    expect(await other.take(sharedKey, p, 2)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await other.take(sharedKey, p, 1)).toMatchObject({ allowed: false });
    await limiter.close();
    await other.close();
    await slots.close();
  }, 30_000);
});
