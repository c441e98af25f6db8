import Fastify from 'fastify';
import Redis from 'ioredis';
import { mountBullBoard } from '../../src/lanes/bull-board';
import { BullmqLaneScheduler } from '../../src/lanes/bullmq-lane-scheduler';
import { LaneRef, LaneRunOutcome, LaneScheduler } from '../../src/lanes/lane-scheduler.port';
import { ThrowawayRedis } from '../support/throwaway-redis';
import { elapse } from '../support/wait';
import { Gate, lane, RunLog, startWith, testLaneScheduler, waitFor, withTestHandler } from './lane-scheduler.conformance';

let redis: ThrowawayRedis;
beforeAll(async () => {
  redis = await ThrowawayRedis.start();
});
afterAll(async () => {
  await redis?.stop();
});

let queues = 0;
const freshQueue = () => `lanes-${++queues}`;

// A queue of its own per test: nothing left over from a previous test can run.
testLaneScheduler(
  'bullmq',
  (handler, options) => new BullmqLaneScheduler(handler, { redisUrl: redis.url, ...options, queueName: freshQueue() }),
);

describe('bullmq lane scheduler', () => {
  const open: LaneScheduler[] = [];
  const make = (options: { queueName: string; instanceId?: string; concurrency?: number }) => {
    const s = withTestHandler((handler) => new BullmqLaneScheduler(handler, { redisUrl: redis.url, ...options }));
    open.push(s);
    return s;
  };
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
  });

  it('shares lanes between two instances and never runs one lane on both at once', async () => {
    const queueName = freshQueue();
    const instances = [
      make({ queueName, instanceId: 'svc-a', concurrency: 16 }),
      make({ queueName, instanceId: 'svc-b', concurrency: 16 }),
    ];
    const running = new Map<string, number>();
    const lastStart = new Map<string, number>();
    const runsBy = [0, 0];
    let overlaps = 0;
    const handler =
      (i: number) =>
      async (l: LaneRef): Promise<LaneRunOutcome> => {
        const now = running.get(l.key) ?? 0;
        if (now > 0) overlaps++;
        running.set(l.key, now + 1);
        lastStart.set(l.key, Date.now());
        runsBy[i]++;
        await elapse(2 + Math.random() * 6, 'a run takes 2 to 8 ms');
        running.set(l.key, running.get(l.key)! - 1);
        return { status: 'idle' };
      };
    await Promise.all(instances.map((s, i) => startWith(s, handler(i))));
    const lanes = Array.from({ length: 200 }, (_, i) => lane(`k${i}`));
    const rounds = 10;
    let lastWakeCalledAt = 0;
    for (let round = 0; round < rounds; round++) {
      // Each lane twice in a row, in a new order each round: without dedupe, the two jobs would be
      // fetched by two workers at once.
      const order = [...lanes].sort(() => Math.random() - 0.5).flatMap((l) => [l, l]);
      lastWakeCalledAt = Date.now();
      await instances[round % 2].wakeMany(order);
      await elapse(20, 'rounds of wakes 20 ms apart, alternating instances');
    }
    // Every lane runs once more after the last wake, which came while many of them were running.
    await waitFor(
      'a run of every lane after the last wake',
      () => lanes.every((l) => (lastStart.get(l.key) ?? 0) >= lastWakeCalledAt),
      30_000,
    );
    // Drained: nothing running, nothing in Redis, nothing waiting in either instance's fair queue. A lane of
    // one instance's queue waits for a slot its tenant holds in Redis, freed when the other instance's run is
    // seen finished (a check every 500 ms), so this takes a few checks on a loaded machine.
    let stats = await Promise.all(instances.map((s) => s.stats()));
    for (const deadline = Date.now() + 15_000; Date.now() < deadline; stats = await Promise.all(instances.map((s) => s.stats()))) {
      if ([...running.values()].every((n) => n === 0) && stats.every((x) => x.queued === 0 && x.running === 0)) break;
      await elapse(50, 'poll interval: until both instances are quiet');
    }
    expect(stats).toEqual([
      { queued: 0, running: 0 },
      { queued: 0, running: 0 },
    ]);
    expect(overlaps).toBe(0);
    expect(runsBy[0]).toBeGreaterThan(0);
    expect(runsBy[1]).toBeGreaterThan(0);
    // At most one run per lane per round, plus the one for a wake during a run: the twin wakes were deduplicated.
    expect(runsBy[0] + runsBy[1]).toBeLessThanOrEqual(lanes.length * (rounds + 1));
  });

  it('keeps working for new wakes after FLUSHALL, even with a run in flight', async () => {
    const s = make({ queueName: freshQueue() });
    const gate = new Gate();
    const log = new RunLog();
    await startWith(
      s,
      log.handler(async (l) => {
        if (l.key === 'in-flight' && log.count('in-flight') === 1) await gate.wait();
        return { status: 'idle' };
      }),
    );
    await s.wake(lane('before'));
    await waitFor('a run before the flush', () => log.finished('before') === 1);
    await s.wake(lane('in-flight'));
    await waitFor('the in-flight run', () => log.count('in-flight') === 1);
    await redis.flushAll();
    gate.open(); // its job is gone: finishing it fails, which the worker must survive
    await waitFor('the in-flight run to end', () => log.finished('in-flight') === 1);
    await s.wakeMany([lane('after-1'), lane('after-2'), lane('in-flight')]);
    await waitFor(
      'runs after the flush',
      () => log.finished('after-1') === 1 && log.finished('after-2') === 1 && log.finished('in-flight') === 2,
    );
  });

  it('keeps working after Redis restarts empty', async () => {
    const s = make({ queueName: freshQueue() });
    const log = new RunLog();
    await startWith(s, log.handler());
    await s.wake(lane('before'));
    await waitFor('a run before the restart', () => log.finished('before') === 1);
    await redis.restart();
    // Wakes fail fast while the connection is down; the lane runtime's sweep would wake again.
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        await s.wake(lane('after'));
        break;
      } catch (e) {
        if (Date.now() > deadline) throw e;
        await elapse(200, 'poll interval: until the queue answers');
      }
    }
    await waitFor('a run after the restart', () => log.finished('after') === 1, 20_000);
  }, 45_000);

  it('mounts a Bull Board that only an authorized operator can reach', async () => {
    const s = make({ queueName: 'board-queue' });
    const app = Fastify();
    app.get('/other', async () => ({ ok: true }));
    await mountBullBoard(app, [s.boardAdapter()], '/admin/queues', (req) => req.headers.authorization === 'Bearer s3cret');
    await app.ready();
    try {
      for (const url of ['/admin/queues', '/admin/queues/api/queues', '/admin/queues/api/queues?token=s3cret']) {
        const denied = await app.inject({ method: 'GET', url });
        expect(denied.statusCode).toBe(401);
        expect(denied.json()).toMatchObject({ error: 'UNAUTHORIZED', message: expect.any(String) });
      }
      const wrong = await app.inject({ method: 'GET', url: '/admin/queues/api/queues', headers: { authorization: 'Bearer nope' } });
      expect(wrong.statusCode).toBe(401);
      const auth = { authorization: 'Bearer s3cret' };
      const page = await app.inject({ method: 'GET', url: '/admin/queues', headers: auth });
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toMatch(/html/);
      const api = await app.inject({ method: 'GET', url: '/admin/queues/api/queues', headers: auth });
      expect(api.statusCode).toBe(200);
      expect(api.json().queues.map((q: { name: string }) => q.name)).toEqual(['board-queue']);
      // The guard is scoped to the board: the rest of the app is untouched.
      expect((await app.inject({ method: 'GET', url: '/other' })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('drains 100,000 lanes on one queue and one worker, with a fixed number of Redis connections', async () => {
    const total = 100_000;
    const clientsBefore = await redis.clientCount();
    const s = make({ queueName: freshQueue(), instanceId: 'bulk' });
    let ran = 0;
    await startWith(s, async () => {
      ran++;
      return { status: 'idle' };
    });
    let maxOwn = 0;
    let maxAdded = 0;
    const sample = async () => {
      maxOwn = Math.max(maxOwn, await redis.clientCount(s.connectionTag));
      maxAdded = Math.max(maxAdded, (await redis.clientCount()) - clientsBefore);
    };
    const lanes = Array.from({ length: total }, (_, i) => lane(`key-${i}`, `tenant-${i % 50}`, `version-${i % 7}`));
    const startedAt = Date.now();
    await s.wakeMany(lanes);
    const wokenAt = Date.now();
    const ranWhileWaking = ran;
    await sample();
    const midQueue = await s.stats();
    while (ran < total) {
      if (Date.now() - startedAt > 100_000) throw new Error(`only ${ran} of ${total} lanes ran in 100 s`);
      await sample();
      await elapse(500, 'sampling period while the lanes drain');
    }
    const drainedAt = Date.now();
    await sample();
    await elapse(300, 'time for a lane to run twice or late, which must not happen');
    expect(ran).toBe(total);
    expect(await s.stats()).toEqual({ queued: 0, running: 0 });
    expect(maxOwn).toBe(3);
    expect(maxAdded).toBeLessThanOrEqual(20);

    // Nothing is left per lane: finished jobs and their deduplication keys are removed.
    const probe = new Redis(redis.url);
    const keys = await probe.dbsize();
    probe.disconnect();
    expect(keys).toBeLessThan(100);

    const rate = (lanesRun: number, ms: number) => Math.round(lanesRun / (ms / 1000));
    console.log(
      [
        `bullmq lanes, one instance, worker concurrency 8, no-op handler, ${total} lanes:`,
        `  wakeMany: ${wokenAt - startedAt} ms (${rate(total, wokenAt - startedAt)} wakes/s; ${ranWhileWaking} lanes ran meanwhile, ${midQueue.queued} queued after it)`,
        `  drain after wakeMany returned: ${rate(total - ranWhileWaking, drainedAt - wokenAt)} lanes/s`,
        `  first wake to last run: ${drainedAt - startedAt} ms, ${rate(total, drainedAt - startedAt)} lanes/s overall`,
        `  Redis connections of this instance: ${maxOwn} (max sampled), clients added in all: ${maxAdded}; keys left after the drain: ${keys}`,
      ].join('\n'),
    );
  }, 110_000);
});
