import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import { Logger } from '@nestjs/common';
import { Job, Queue, Worker } from 'bullmq';
import Redis from 'ioredis';
import { SerialRunner } from '../common/serial-runner';
import { FairLaneQueue } from './fair-lane-queue';
import {
  BullmqLaneSchedulerOptions,
  dedupeId,
  FedLane,
  JOB_NAME,
  jobOptions,
  LANE_JOBS_ALIVE,
  LaneJobsAlive,
  laneData,
  quit,
  WAKE_CHUNK,
} from './bullmq-lane-jobs';

export type { BullmqLaneSchedulerOptions } from './bullmq-lane-jobs';
import { laneId, runLaneHandler } from './in-process-lane-scheduler';
import { LaneHandler, LaneRef, LaneRunOutcome, LaneScheduler, LaneSchedulerStats } from './lane-scheduler.port';

/** How often lanes in Redis are checked for a finished job this instance did not see finish (another instance's worker, a flush). */
const RECONCILE_MS = 500;
/** After Redis refused a feed, the waiting lanes are offered again this much later. */
const FEED_RETRY_MS = 1000;

/**
 * Every lane woken across all service instances runs through ONE BullMQ queue; each instance runs
 * ONE worker. Redis connections per instance are fixed, whatever the number of lanes or tenants:
 *   1. `<tag>:queue`  — feeds, wakes, stats, checks, the re-adds after a run;
 *   2. `<tag>:worker` — the worker's commands (fetch, finish, lock renewal);
 *   3. the worker's blocking connection, named by BullMQ `bull:<queue>:w:<tag>` (opened by start()).
 * where `<tag>` is `es-lanes:<instanceId>`. So 3 per instance (1 before start()).
 *
 * Fair shares. Open-source BullMQ serves one queue in order and has no groups, so the order of
 * the queue is made fair before lanes enter it: a woken lane first waits in this instance's
 * FairLaneQueue (tenants in turn, a tenant's versions in turn), which feeds Redis only while its
 * tenant has fewer than `maxInFlightPerTenant` lanes there from this instance. So Redis holds at
 * most (tenants with work × the cap) jobs per instance, interleaved: a tenant's single lane waits
 * behind at most that, never behind another tenant's 100,000. Redis still holds no truth: the
 * waiting lanes are memory, and the store sweep wakes whatever a crash lost.
 * A lane keeps its tenant's slot while its job chain lives in Redis (waiting, running, a retry's
 * delay); a `more` goes back to the fair queue of the instance that ran it, behind its tenant's
 * other lanes. This instance's worker reports a finish at once; lanes another instance ran (or a
 * flush removed) are found by a check every RECONCILE_MS while any are in Redis.
 *
 * Keeping the worker fed (issue 25). BullMQ's worker fetches a job with the finish of the previous
 * one (one round trip) only if one is waiting then; otherwise its main loop fetches one job per round
 * trip, in sequence. With the cap, a busy tenant's jobs are all running, so every finish found the
 * queue empty and every job went the slow way; a tenant's lanes per second were then the cap divided
 * by (feed + one-at-a-time fetch + run + finish + the completed event), 50–100× slower than
 * in-process at 1,000 lanes/s. So a run that ends `idle`/`held` with no wake from here during it
 * gives its slot back when the handler returns (nothing of this instance's follows it in Redis) and
 * waits for the next feed to reach Redis before BullMQ finishes the job: the finish's fetch-next then
 * takes a lane fed meanwhile. The cap still counts waiting + running exactly. (A job BullMQ sees
 * stalled after its handler returned runs again uncounted: bounded by the running jobs.)
 *
 * Dedupe, and wakes while a lane runs. A lane's jobs share a BullMQ deduplication id (the lane
 * id, base64url so that no character is special to BullMQ); job ids are BullMQ's own counter.
 * A wake for a lane that is in Redis already (from this instance) is added at once, and with
 * `keepLastIfActive` adding a job for a lane:
 *   - whose job waits: is a no-op (it will run, after this wake);
 *   - whose job is delayed (a retry backoff): with `reschedule`, moves it to now, as the
 *     in-process scheduler does for a wake during a backoff;
 *   - whose job is ACTIVE: stores the new job aside (only the latest), and BullMQ creates it in
 *     the same Lua script that finishes the active job. So a wake during a run is never lost
 *     and the lane never has two runnable jobs (never two runs at once, across instances).
 * This is all inside BullMQ's Lua scripts, so it is atomic, unlike a "dirty" key of our own
 * checked after the run (a window between the check and the job's completion) or generation
 * suffixes in custom job ids (two jobs of one lane could then be runnable at once).
 * A `retry` is the same add with a delay, made while its job is active; the latest add wins, so
 * the retry's delay overrides a wake that came during the run.
 */
export class BullmqLaneScheduler implements LaneScheduler {
  readonly kind = 'bullmq' as const;
  readonly instanceId: string;
  private readonly logger = new Logger('BullmqLaneScheduler');
  private readonly concurrency: number;
  private readonly queueConnection: Redis;
  private readonly queue: Queue<LaneRef>;
  private workerConnection?: Redis;
  private worker?: Worker<LaneRef>;
  private closed = false;
  /** Woken here, not yet in Redis. */
  private readonly waiting: FairLaneQueue;
  /** Put in Redis by this instance, their job chain not yet seen finished. */
  private readonly fed = new Map<string, FedLane>();
  private readonly feeder = new SerialRunner(
    () => this.feed(),
    (e) => this.logger.warn(`feeding lanes failed: ${e instanceof Error ? e.message : e}`),
  );
  private feedRetry?: NodeJS.Timeout;
  private reconciler?: NodeJS.Timeout;
  private readonly toCheck = new Set<string>();
  private checkScheduled = false;
  /** Runs waiting for the next feed to reach Redis (see runJob). */
  private refillWaiters: (() => void)[] = [];
  /** Jobs whose finish runJob handled already: their `completed` event changes nothing. */
  private readonly finishedEarly = new Set<string>();

  constructor(
    /** What runs each lane this instance's worker takes (LaneRunner). */
    private readonly handler: LaneHandler,
    private readonly options: BullmqLaneSchedulerOptions,
  ) {
    this.concurrency = options.concurrency ?? 8;
    if (!(this.concurrency >= 1)) throw new Error(`concurrency must be at least 1, got ${this.concurrency}`);
    this.waiting = new FairLaneQueue(options.maxInFlightPerTenant ?? this.concurrency);
    this.instanceId = options.instanceId ?? `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    if (/\s/.test(this.instanceId)) throw new Error(`instanceId must not contain spaces: ${this.instanceId}`);
    // Auto-pipelining: the commands of one event-loop turn (a feed's job adds, the finishes) go in one
    // socket write; the profile of the BullMQ lanes was a third in writeBuffer, one write per command.
    this.queueConnection = new Redis(options.redisUrl, {
      connectionName: `${this.connectionTag}:queue`,
      maxRetriesPerRequest: 2,
      enableAutoPipelining: true,
    });
    this.queueConnection.defineCommand('laneJobsAlive', { lua: LANE_JOBS_ALIVE });
    this.queue = new Queue<LaneRef>(options.queueName ?? 'es-lanes', { connection: this.queueConnection });
    this.queue.on('error', (e) => this.logger.warn(`queue: ${e.message}`));
  }

  /** Contained in the name of each Redis connection of this instance. */
  get connectionTag(): string {
    return `es-lanes:${this.instanceId}`;
  }

  async wake(lane: LaneRef): Promise<void> {
    await this.wakeMany([lane]);
  }

  async wakeMany(lanes: LaneRef[]): Promise<void> {
    if (this.closed) return;
    const inRedis = new Map<string, LaneRef>();
    for (const lane of lanes) {
      const id = laneId(lane);
      const fed = this.fed.get(id);
      // In Redis already: BullMQ's dedupe decides atomically (see above). Otherwise it waits its turn here.
      if (fed) {
        fed.rewoken = true;
        inRedis.set(id, lane);
      } else {
        this.waiting.push(id, laneData(lane));
      }
    }
    this.feeder.wake();
    const again = [...inRedis.values()];
    for (let i = 0; i < again.length && !this.closed; i += WAKE_CHUNK) {
      await this.queue.addBulk(
        again.slice(i, i + WAKE_CHUNK).map((lane) => ({ name: JOB_NAME, data: laneData(lane), opts: jobOptions(lane, 0) })),
      );
    }
  }

  async start(): Promise<void> {
    if (this.worker) throw new Error('lane scheduler already started');
    if (this.closed) throw new Error('lane scheduler is closed');
    this.workerConnection = new Redis(this.options.redisUrl, {
      connectionName: `${this.connectionTag}:worker`,
      maxRetriesPerRequest: null,
    });
    this.worker = new Worker<LaneRef>(this.queue.name, (job) => this.runJob(job), {
      connection: this.workerConnection,
      concurrency: this.concurrency,
      name: this.connectionTag,
      // A lane whose job was active in an instance that died stays stuck (its wakes are folded
      // into that job) until BullMQ sees the job stalled: lock and check short, so that is
      // seconds, not a minute. The lock is renewed every lockDuration/2 while a lane runs. A job
      // wrongly seen stalled (a long pause) only runs twice: the store lease keeps one run at a time.
      lockDuration: this.options.lockMs ?? 10_000,
      stalledInterval: Math.max(250, Math.floor((this.options.lockMs ?? 10_000) / 2)),
      maxStalledCount: 1_000,
    });
    this.worker.on('error', (e) => this.logger.warn(`worker: ${e.message}`));
    this.worker.on('failed', (job, e) => {
      this.logger.warn(`lane job ${job?.id} failed (the store sweep will wake the lane again): ${e.message}`);
      if (job?.id !== undefined && this.finishedEarly.delete(job.id)) return;
      if (job) this.jobFinished(job.data, undefined);
    });
    // Emitted once BullMQ has finished the job in Redis (and created a follow-up, if any).
    this.worker.on('completed', (job, status: LaneRunOutcome['status']) => {
      if (job.id !== undefined && this.finishedEarly.delete(job.id)) return;
      this.jobFinished(job.data, status);
    });
    await this.worker.waitUntilReady();
    this.feeder.wake(); // lanes woken before start
  }

  async stats(): Promise<LaneSchedulerStats> {
    const c = await this.queue.getJobCounts('waiting', 'delayed', 'prioritized', 'active');
    return { queued: this.waiting.size + c.waiting + c.delayed + c.prioritized, running: c.active };
  }

  /** The queue, for a Bull Board (see bull-board.ts). */
  boardAdapter(): Queue {
    return this.queue;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.feedRetry);
    clearInterval(this.reconciler);
    await this.feeder.stop();
    this.releaseRefillWaiters(this.refillWaiters); // no feed runs any more: runs awaiting one finish now
    // The worker first: it waits for running handlers, whose re-adds still need the queue.
    await this.worker?.close();
    await this.handOver();
    await this.queue.close();
    await Promise.all([quit(this.workerConnection), quit(this.queueConnection)]);
  }

  /**
   * At shutdown, the lanes still waiting in this instance's memory go to Redis, where the other
   * instances' workers take them at once (rather than at their next store sweep). Best effort: a
   * lane not handed over is found by a sweep.
   */
  private async handOver(): Promise<void> {
    const left = [...this.waiting.waiting()];
    for (let i = 0; i < left.length; i += WAKE_CHUNK) {
      try {
        await this.queue.addBulk(
          left.slice(i, i + WAKE_CHUNK).map((lane) => ({ name: JOB_NAME, data: laneData(lane), opts: jobOptions(lane, 0) })),
        );
      } catch (e) {
        this.logger.warn(`handing lanes over at shutdown failed (the store sweep finds them): ${e instanceof Error ? e.message : e}`);
        return;
      }
    }
  }

  private async runJob(job: Job<LaneRef>): Promise<LaneRunOutcome['status']> {
    const lane = job.data;
    const id = laneId(lane);
    const outcome = await runLaneHandler(this.handler, lane, this.logger);
    // Lanes the run handed events to (a rerouting run): woken like any other; the sweep finds them if this fails.
    if (outcome.wake) void this.wakeMany(outcome.wake).catch(() => undefined);
    if (outcome.status === 'more') {
      // Like a new wake, at the back of its tenant's turn here: other lanes, of this tenant too, go first.
      this.giveBack(id);
      this.waiting.push(id, laneData(lane));
      await this.refill();
    } else if (outcome.status === 'idle' || outcome.status === 'held') {
      const fed = this.fed.get(id);
      // Nothing of this instance's follows the run (no wake from here during it): its slot is free
      // now, before BullMQ finishes the job. A wake from now on waits in the fair queue like any
      // other, and its add (this job still active) becomes BullMQ's follow-up. Then the refill: the
      // next lanes of this instance reach Redis before this job's finish, whose fetch-next takes
      // one of them in the same round trip (see "Keeping the worker fed" above).
      if (fed && !fed.rewoken && job.id !== undefined) {
        this.finishedEarly.add(job.id);
        this.giveBack(id);
        await this.refill();
      }
    } else if (outcome.status === 'retry') {
      // The latest add wins over a wake during the run. If it fails (Redis down), the job fails: the store sweep wakes the lane.
      await this.queue.add(JOB_NAME, lane, jobOptions(lane, Math.max(0, outcome.afterMs)));
    }
    return outcome.status;
  }

  /**
   * Resolves once the feed that starts next has put its first lanes in Redis (or found none to
   * feed, or failed): a run awaits it before BullMQ finishes its job, so that the finish's
   * fetch-next finds them.
   */
  private refill(): Promise<void> {
    // Nothing waits here: there is nothing to refill, and the finish need not wait for a feed under way.
    if (this.closed || this.feeder.stopped || this.waiting.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.refillWaiters.push(resolve);
      this.feeder.wake();
    });
  }

  private releaseRefillWaiters(waiters: (() => void)[]): void {
    for (const w of waiters.splice(0)) w();
  }

  /** Moves lanes whose tenant has room from the fair queue into Redis, in turn order. */
  private async feed(): Promise<void> {
    const waiters = this.refillWaiters;
    this.refillWaiters = [];
    try {
      await this.feedAll(waiters);
    } finally {
      this.releaseRefillWaiters(waiters);
    }
  }

  private async feedAll(waiters: (() => void)[]): Promise<void> {
    while (this.worker && !this.closed) {
      const batch: LaneRef[] = [];
      for (let next; batch.length < WAKE_CHUNK && (next = this.waiting.take());) {
        if (this.fed.has(next.id)) {
          this.waiting.release(next.lane.tenantId); // holds a slot already (never expected: every push checks `fed`)
          continue;
        }
        this.fed.set(next.id, { lane: next.lane, confirmed: false, rewoken: false });
        batch.push(next.lane);
      }
      if (batch.length === 0) return;
      try {
        await this.queue.addBulk(batch.map((lane) => ({ name: JOB_NAME, data: lane, opts: jobOptions(lane, 0) })));
      } catch (e) {
        // Redis unreachable: the lanes wait here again and are offered later (the store sweep wakes them too).
        for (const lane of batch) {
          this.giveBack(laneId(lane));
          this.waiting.push(laneId(lane), lane);
        }
        this.feedRetry ??= setTimeout(() => {
          this.feedRetry = undefined;
          this.feeder.wake();
        }, FEED_RETRY_MS).unref();
        throw e;
      }
      for (const lane of batch) {
        const f = this.fed.get(laneId(lane));
        if (f) f.confirmed = true;
      }
      this.reconcileWhileFed();
      this.releaseRefillWaiters(waiters);
    }
  }

  /** A job of a lane finished in this instance: its slot is free unless its chain goes on in Redis. */
  private jobFinished(lane: LaneRef, status: LaneRunOutcome['status'] | undefined): void {
    const id = laneId(lane);
    const fed = this.fed.get(id);
    if (!fed) return; // fed by another instance
    if (status === 'retry') return; // re-added by the run, delayed: still in Redis
    if (status === 'more') return; // the run gave its slot back already (and it may hold a new one)
    // Not woken again from here: nothing of this instance's follows it (a follow-up another
    // instance's wake made is counted by that instance), so the slot is free without asking Redis.
    if (!fed.rewoken) {
      this.giveBack(id);
      this.feeder.wake();
      return;
    }
    // A wake from here during the run may have made BullMQ create a follow-up: only Redis knows (asked once per tick).
    this.toCheck.add(id);
    if (this.checkScheduled) return;
    this.checkScheduled = true;
    setImmediate(() => {
      this.checkScheduled = false;
      const ids = [...this.toCheck];
      this.toCheck.clear();
      void this.releaseFinished(ids);
    });
  }

  /** Only while lanes of this instance are in Redis: an idle instance keeps no timer. */
  private reconcileWhileFed(): void {
    if (this.reconciler || this.fed.size === 0) return;
    this.reconciler = setInterval(() => {
      if (this.fed.size === 0 || this.closed) {
        clearInterval(this.reconciler);
        this.reconciler = undefined;
        return;
      }
      void this.releaseFinished([...this.fed].filter(([, f]) => f.confirmed).map(([id]) => id));
    }, RECONCILE_MS);
    this.reconciler.unref();
  }

  /** Gives back the slots of those lanes whose job chain has ended in Redis. */
  private async releaseFinished(ids: string[]): Promise<void> {
    try {
      for (let i = 0; i < ids.length && !this.closed; i += WAKE_CHUNK) {
        const chunk = ids.slice(i, i + WAKE_CHUNK);
        const alive: number[] = await (this.queueConnection as unknown as LaneJobsAlive).laneJobsAlive(
          chunk.length,
          ...chunk.map((id) => this.queue.toKey(`de:${dedupeId(id)}`)),
          this.queue.toKey(''),
        );
        chunk.forEach((id, j) => alive[j] === 0 && this.giveBack(id));
      }
    } catch (e) {
      this.logger.warn(`checking lanes in Redis failed (checked again in ${RECONCILE_MS} ms): ${e instanceof Error ? e.message : e}`);
      this.reconcileWhileFed();
    }
    this.feeder.wake();
  }

  private giveBack(id: string): void {
    const f = this.fed.get(id);
    if (!f) return;
    this.fed.delete(id);
    this.waiting.release(f.lane.tenantId);
  }
}
