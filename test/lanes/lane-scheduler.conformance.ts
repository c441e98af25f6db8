import { LaneHandler, LaneRef, LaneRunOutcome, LaneScheduler } from '../../src/lanes/lane-scheduler.port';
import { elapse } from '../support/wait';

export type LaneSchedulerFactory = (
  handler: LaneHandler,
  options: {
    concurrency: number;
    maxInFlightPerTenant?: number;
  },
) => LaneScheduler | Promise<LaneScheduler>;

type HandlerBody = LaneHandler | ((lane: LaneRef) => Promise<LaneRunOutcome>);

/**
 * The handler a test's scheduler is made with: schedulers take theirs at construction, a test
 * chooses its body when it starts the scheduler (startWith).
 */
export class TestHandler implements LaneHandler {
  private body?: HandlerBody;
  use(body: HandlerBody): void {
    this.body = body;
  }
  run(lane: LaneRef): Promise<LaneRunOutcome> {
    const body = this.body!;
    return typeof body === 'function' ? body(lane) : body.run(lane);
  }
}

const testHandlers = new WeakMap<LaneScheduler, TestHandler>();

/** A scheduler made with a TestHandler, for startWith. */
export function withTestHandler<S extends LaneScheduler>(make: (handler: TestHandler) => S): S {
  const handler = new TestHandler();
  const s = make(handler);
  testHandlers.set(s, handler);
  return s;
}

/** Starts a scheduler made with a TestHandler, running `body` for its lanes. */
export async function startWith(s: LaneScheduler, body: HandlerBody): Promise<void> {
  testHandlers.get(s)!.use(body);
  await s.start();
}

export const lane = (key: string, tenantId = 't1', versionId = 'v1'): LaneRef => ({ tenantId, versionId, key });
export async function waitFor(what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await elapse(10, 'poll interval');
  }
}

/** A handler can block on a gate until the test opens it. */
export class Gate {
  private waiters: (() => void)[] = [];
  private isOpen = false;
  wait(): Promise<void> {
    return this.isOpen ? Promise.resolve() : new Promise((r) => this.waiters.push(r));
  }
  open(): void {
    this.isOpen = true;
    this.waiters.splice(0).forEach((r) => r());
  }
}

interface Run {
  start: number;
  end?: number;
}

/** Records every run of every lane, and how many ran at once, per lane and overall. */
export class RunLog {
  readonly runs = new Map<string, Run[]>();
  private readonly activePerLane = new Map<string, number>();
  maxPerLane = 0;
  active = 0;
  maxActive = 0;

  /** Wraps `body` (called with the lane and its run number, from 1) into a recorded handler. */
  handler(body: (lane: LaneRef, n: number) => Promise<LaneRunOutcome> | LaneRunOutcome = () => ({ status: 'idle' })): HandlerBody {
    return async (l: LaneRef) => {
      const id = l.key;
      const run: Run = { start: Date.now() };
      const runs = this.runs.get(id) ?? [];
      runs.push(run);
      this.runs.set(id, runs);
      const perLane = (this.activePerLane.get(id) ?? 0) + 1;
      this.activePerLane.set(id, perLane);
      this.maxPerLane = Math.max(this.maxPerLane, perLane);
      this.active++;
      this.maxActive = Math.max(this.maxActive, this.active);
      try {
        return await body(l, runs.length);
      } finally {
        run.end = Date.now();
        this.activePerLane.set(id, this.activePerLane.get(id)! - 1);
        this.active--;
      }
    };
  }

  count(key: string): number {
    return this.runs.get(key)?.length ?? 0;
  }

  finished(key: string): number {
    return (this.runs.get(key) ?? []).filter((r) => r.end !== undefined).length;
  }

  run(key: string, n: number): Run {
    return this.runs.get(key)![n - 1];
  }
}

/** One suite, every scheduler: what the LaneScheduler port promises, against the real thing. */
export function testLaneScheduler(name: string, factory: LaneSchedulerFactory): void {
  describe(`${name} lane scheduler conformance`, () => {
    const open: LaneScheduler[] = [];
    const make = async (concurrency = 8, maxInFlightPerTenant?: number) => {
      const handler = new TestHandler();
      const s = await factory(handler, { concurrency, maxInFlightPerTenant });
      testHandlers.set(s, handler);
      open.push(s);
      return s;
    };
    afterEach(async () => {
      for (const s of open.splice(0)) await s.close();
    });

    it('runs a woken lane once', async () => {
      const s = await make();
      const log = new RunLog();
      await startWith(s, log.handler());
      await s.wake(lane('a'));
      await waitFor('the run', () => log.finished('a') === 1);
      await elapse(300, 'time for a further run, which must not come');
      expect(log.count('a')).toBe(1);
      expect(await s.stats()).toEqual({ queued: 0, running: 0 });
    });

    it('runs a lane woken many times while queued once, and keeps wakes made before start', async () => {
      const s = await make();
      for (let i = 0; i < 20; i++) await s.wake(lane('a'));
      await s.wakeMany([lane('a'), lane('a'), lane('b')]);
      expect(await s.stats()).toEqual({ queued: 2, running: 0 });
      const log = new RunLog();
      await startWith(s, log.handler());
      await waitFor('the runs', () => log.finished('a') === 1 && log.finished('b') === 1);
      await elapse(300, 'time for a further run, which must not come');
      expect(log.count('a')).toBe(1);
      expect(log.count('b')).toBe(1);
    });

    it('runs a lane exactly once more when woken during a run', async () => {
      const s = await make();
      const gate = new Gate();
      const log = new RunLog();
      await startWith(
        s,
        log.handler(async (_l, n) => {
          if (n === 1) await gate.wait();
          return { status: 'idle' };
        }),
      );
      await s.wake(lane('a'));
      await waitFor('the first run', () => log.count('a') === 1);
      expect(await s.stats()).toMatchObject({ running: 1 });
      for (let i = 0; i < 5; i++) await s.wake(lane('a'));
      const wokenAt = Date.now();
      gate.open();
      await waitFor('the second run', () => log.finished('a') === 2);
      await elapse(300, 'time for a third run, which must not come');
      expect(log.count('a')).toBe(2);
      expect(log.run('a', 2).start).toBeGreaterThanOrEqual(wokenAt);
      expect(log.maxPerLane).toBe(1);
    });

    it('never runs one lane twice at once, however often it is woken', async () => {
      const s = await make(4);
      const log = new RunLog();
      await startWith(
        s,
        log.handler(async () => {
          await elapse(15, 'a run takes a while');
          return { status: 'idle' };
        }),
      );
      const until = Date.now() + 400;
      while (Date.now() < until) {
        await s.wakeMany([lane('a'), lane('b')]);
        await elapse(3, 'wakes paced over 400 ms');
      }
      await waitFor('quiet', () => log.active === 0);
      await elapse(200, 'time for a run to overlap another of its lane, which must not happen');
      expect(log.maxPerLane).toBe(1);
      expect(log.count('a')).toBeGreaterThanOrEqual(5);
      expect(log.count('b')).toBeGreaterThanOrEqual(5);
    });

    it('runs different lanes in parallel, up to the concurrency', async () => {
      const s = await make(4);
      const gate = new Gate();
      const log = new RunLog();
      await startWith(
        s,
        log.handler(async () => {
          await gate.wait();
          return { status: 'idle' };
        }),
      );
      const keys = Array.from({ length: 10 }, (_, i) => `k${i}`);
      await s.wakeMany(keys.map((k) => lane(k)));
      await waitFor('4 running', () => log.active === 4);
      await elapse(300, 'time for a fifth lane to start, which must not happen');
      expect(log.active).toBe(4);
      expect(await s.stats()).toEqual({ queued: 6, running: 4 });
      gate.open();
      await waitFor('all lanes', () => keys.every((k) => log.finished(k) === 1));
      expect(log.maxActive).toBe(4);
    });

    it('runs a lane again after `more`, behind lanes already queued', async () => {
      const s = await make(1);
      const order: string[] = [];
      const log = new RunLog();
      await s.wakeMany([lane('a'), lane('b')]);
      await startWith(
        s,
        log.handler((l, n) => {
          order.push(l.key);
          return l.key === 'a' && n < 3 ? { status: 'more' } : { status: 'idle' };
        }),
      );
      await waitFor('three runs of a', () => log.finished('a') === 3);
      await elapse(300, 'time for a fourth run of a, which must not come');
      expect(log.count('a')).toBe(3);
      expect(order).toEqual(['a', 'b', 'a', 'a']);
    });

    it('runs a lane again after `retry`, no sooner than afterMs', async () => {
      const s = await make();
      const log = new RunLog();
      await startWith(
        s,
        log.handler((_l, n) => (n === 1 ? { status: 'retry', afterMs: 500 } : { status: 'idle' })),
      );
      await s.wake(lane('a'));
      await waitFor('the first run', () => log.finished('a') === 1);
      await elapse(200, 'inside the retry delay (500 ms): no second run yet');
      expect(log.count('a')).toBe(1);
      expect((await s.stats()).queued).toBe(1);
      await waitFor('the retry', () => log.finished('a') === 2);
      // A timer counts from libuv's cached loop time, which may lag Date.now() by a millisecond: 1 ms of slack.
      expect(log.run('a', 2).start - log.run('a', 1).end!).toBeGreaterThanOrEqual(499);
      await elapse(300, 'time for a third run, which must not come');
      expect(log.count('a')).toBe(2);
    });

    it('cuts a retry delay short when the lane is woken', async () => {
      const s = await make();
      const log = new RunLog();
      await startWith(
        s,
        log.handler((_l, n) => (n === 1 ? { status: 'retry', afterMs: 30_000 } : { status: 'idle' })),
      );
      await s.wake(lane('a'));
      await waitFor('the first run', () => log.finished('a') === 1);
      await elapse(100, 'the lane sits in its 30 s retry delay a while before the wake');
      await s.wake(lane('a'));
      await waitFor('the woken run', () => log.finished('a') === 2, 3000);
    });

    it('keeps a held lane quiet until it is woken', async () => {
      const s = await make();
      const log = new RunLog();
      await startWith(
        s,
        log.handler((_l, n) => (n === 1 ? { status: 'held' } : { status: 'idle' })),
      );
      await s.wake(lane('a'));
      await waitFor('the first run', () => log.finished('a') === 1);
      await elapse(600, 'time for a held lane to run again unwoken, which it must not');
      expect(log.count('a')).toBe(1);
      expect(await s.stats()).toEqual({ queued: 0, running: 0 });
      await s.wake(lane('a'));
      await waitFor('the woken run', () => log.finished('a') === 2);
    });

    it('retries a handler that throws, after about a second', async () => {
      const s = await make();
      const log = new RunLog();
      await startWith(
        s,
        log.handler((_l, n) => {
          if (n === 1) throw new Error('boom (expected by the test)');
          return { status: 'idle' };
        }),
      );
      await s.wake(lane('a'));
      await waitFor('the retry', () => log.finished('a') === 2, 5000);
      expect(log.run('a', 2).start - log.run('a', 1).end!).toBeGreaterThanOrEqual(950);
    });

    it('runs one tenant’s single lane next while another tenant has 100,000 lanes queued', async () => {
      const s = await make(8, 4);
      const starts: string[] = [];
      let bStartedAt = 0;
      await startWith(s, async (l) => {
        starts.push(l.tenantId);
        if (l.tenantId === 'b') bStartedAt = Date.now();
        else await elapse(2, 'a backlog lane does some work'); // the backlog's lanes do some work
        return { status: 'idle' };
      });
      const backlog = 100_000;
      await s.wakeMany(Array.from({ length: backlog }, (_, i) => lane(`k${i}`, 'a')));
      await waitFor('the backlog to be running', () => starts.length >= 200, 30_000);
      const aStartedBefore = starts.length;
      const aRateStart = Date.now();
      const wokenAt = Date.now();
      await s.wake(lane('only', 'b'));
      await waitFor('the single lane of tenant b', () => bStartedAt > 0, 30_000);
      const latency = bStartedAt - wokenAt;
      const aBetween = starts.indexOf('b') - aStartedBefore;
      // How long the rest of the backlog would take at the rate it was being served.
      await elapse(300, "a's rate measured over 300 ms");
      const aRate = (starts.length - aStartedBefore) / ((Date.now() - aRateStart) / 1000);
      const backlogLeftMs = ((backlog - starts.length) / aRate) * 1000;
      // Turns, not FIFO: b waits for at most a few of a's lanes (those already started or in the queue's window), not 100,000.
      console.log(
        `${name}: tenant b's lane started ${latency} ms after its wake, after ${aBetween} more of a's lanes; a's backlog had ~${Math.round(backlogLeftMs / 1000)} s left`,
      );
      expect(aBetween).toBeLessThanOrEqual(16);
      expect(latency).toBeLessThan(1000);
      expect(latency).toBeLessThan(backlogLeftMs / 20);
      expect(starts.length).toBeLessThan(backlog / 2);
    }, 60_000);

    it('runs at most maxInFlightPerTenant lanes of one tenant at once, and leaves the other slots to other tenants', async () => {
      const s = await make(8, 3);
      const gate = new Gate();
      const running = new Map<string, number>();
      const maxRunning = new Map<string, number>();
      let active = 0;
      let maxActive = 0;
      const ran = new Map<string, number>();
      await startWith(s, async (l) => {
        running.set(l.tenantId, (running.get(l.tenantId) ?? 0) + 1);
        maxRunning.set(l.tenantId, Math.max(maxRunning.get(l.tenantId) ?? 0, running.get(l.tenantId)!));
        maxActive = Math.max(maxActive, ++active);
        if (l.tenantId === 'stuck') await gate.wait();
        else await elapse(5, 'a lane does some work');
        running.set(l.tenantId, running.get(l.tenantId)! - 1);
        active--;
        ran.set(l.tenantId, (ran.get(l.tenantId) ?? 0) + 1);
        return { status: 'idle' };
      });
      // One tenant's lanes hang: it holds its 3 slots, no more.
      await s.wakeMany(Array.from({ length: 20 }, (_, i) => lane(`s${i}`, 'stuck')));
      await waitFor('the stuck tenant at its cap', () => running.get('stuck') === 3);
      await elapse(300, 'time for the stuck tenant to take a fourth slot, which it must not');
      expect(running.get('stuck')).toBe(3);
      expect(await s.stats()).toEqual({ queued: 17, running: 3 });
      // Two more tenants share the other 5 slots (3 + 2), never more than 3 each.
      const others = ['x', 'y'];
      try {
        await s.wakeMany(others.flatMap((t) => Array.from({ length: 30 }, (_, i) => lane(`k${i}`, t))));
        await waitFor('the other tenants’ lanes', () => others.every((t) => ran.get(t) === 30), 20_000);
        expect(maxActive).toBe(8);
        expect(others.map((t) => maxRunning.get(t))).toEqual([3, 3]);
        expect(ran.get('stuck') ?? 0).toBe(0);
      } finally {
        gate.open();
      }
      await waitFor('the stuck tenant’s lanes', () => ran.get('stuck') === 20, 20_000);
      expect(maxRunning.get('stuck')).toBe(3);
    }, 60_000);

    it('waits for a running handler on close, and starts nothing after', async () => {
      const s = await make();
      const log = new RunLog();
      await startWith(
        s,
        log.handler(async (l) => {
          if (l.key === 'slow') await elapse(500, 'a slow run: close must wait for it');
          return { status: 'idle' };
        }),
      );
      await s.wake(lane('slow'));
      await waitFor('the slow run', () => log.count('slow') === 1);
      await s.close();
      expect(log.finished('slow')).toBe(1);
      await s.wake(lane('late'));
      await elapse(200, 'time for a lane woken after close to run, which it must not');
      expect(log.count('late')).toBe(0);
    });
  });
}
