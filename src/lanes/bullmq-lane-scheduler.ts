import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import { Logger } from '@nestjs/common';
import { Job, JobsOptions, Queue, Worker } from 'bullmq';
import Redis from 'ioredis';
import { laneId, runLaneHandler } from './in-process-lane-scheduler';
import { LaneHandler, LaneRef, LaneScheduler, LaneSchedulerStats } from './lane-scheduler.port';

export interface BullmqLaneSchedulerOptions {
  redisUrl: string;
  /** Jobs this instance's worker runs at once. */
  concurrency?: number;
  /** Every service instance sharing lanes must use the same queue name. */
  queueName?: string;
  /** Tags this instance's Redis connections (CLIENT LIST), so operators and tests can count them. */
  instanceId?: string;
}

const WAKE_CHUNK = 1000;
const JOB_NAME = 'lane';

/**
 * Every lane woken across all service instances goes through ONE BullMQ queue; each instance runs
 * ONE worker. Redis connections per instance are fixed, whatever the number of lanes:
 *   1. `<tag>:queue`  — wakes, stats, the re-adds after a run (fails fast while Redis is down);
 *   2. `<tag>:worker` — the worker's commands (fetch, finish, lock renewal);
 *   3. the worker's blocking connection, named by BullMQ `bull:<queue>:w:<tag>` (opened by start()).
 * where `<tag>` is `es-lanes:<instanceId>`. So 3 per instance (1 before start()).
 *
 * Dedupe, and wakes while a lane runs. A lane's jobs share a BullMQ deduplication id (the lane
 * id, base64url so that no character is special to BullMQ); job ids are BullMQ's own counter.
 * With `keepLastIfActive`, adding a job for a lane:
 *   - with no job: creates it;
 *   - whose job waits: is a no-op (it will run, after this wake);
 *   - whose job is delayed (a retry backoff): with `reschedule`, moves it to now, as the
 *     in-process scheduler does for a wake during a backoff;
 *   - whose job is ACTIVE: stores the new job aside (only the latest), and BullMQ creates it in
 *     the same Lua script that finishes the active job. So a wake during a run is never lost
 *     and the lane never has two runnable jobs (never two runs at once, across instances).
 * This is all inside BullMQ's Lua scripts, so it is atomic, unlike a "dirty" key of our own
 * checked after the run (a window between the check and the job's completion) or generation
 * suffixes in custom job ids (two jobs of one lane could then be runnable at once).
 * The runs a handler asks for (`more`, `retry`) are the same add, made while its job is
 * active; the latest add wins, so a retry's delay overrides a wake that came during the run.
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

  constructor(private readonly options: BullmqLaneSchedulerOptions) {
    this.concurrency = options.concurrency ?? 8;
    if (!(this.concurrency >= 1)) throw new Error(`concurrency must be at least 1, got ${this.concurrency}`);
    this.instanceId = options.instanceId ?? `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    if (/\s/.test(this.instanceId)) throw new Error(`instanceId must not contain spaces: ${this.instanceId}`);
    this.queueConnection = new Redis(options.redisUrl, { connectionName: `${this.connectionTag}:queue`, maxRetriesPerRequest: 2 });
    this.queue = new Queue<LaneRef>(options.queueName ?? 'es-lanes', { connection: this.queueConnection });
    this.queue.on('error', (e) => this.logger.warn(`queue: ${e.message}`));
  }

  /** Contained in the name of each Redis connection of this instance. */
  get connectionTag(): string {
    return `es-lanes:${this.instanceId}`;
  }

  async wake(lane: LaneRef): Promise<void> {
    if (this.closed) return;
    await this.queue.add(JOB_NAME, laneData(lane), jobOptions(lane, 0));
  }

  async wakeMany(lanes: LaneRef[]): Promise<void> {
    for (let i = 0; i < lanes.length && !this.closed; i += WAKE_CHUNK) {
      const chunk = lanes.slice(i, i + WAKE_CHUNK);
      await this.queue.addBulk(chunk.map((lane) => ({ name: JOB_NAME, data: laneData(lane), opts: jobOptions(lane, 0) })));
    }
  }

  async start(handler: LaneHandler): Promise<void> {
    if (this.worker) throw new Error('lane scheduler already started');
    if (this.closed) throw new Error('lane scheduler is closed');
    this.workerConnection = new Redis(this.options.redisUrl, { connectionName: `${this.connectionTag}:worker`, maxRetriesPerRequest: null });
    this.worker = new Worker<LaneRef>(this.queue.name, (job) => this.runJob(handler, job), {
      connection: this.workerConnection,
      concurrency: this.concurrency,
      name: this.connectionTag,
      // A lane whose job was active in an instance that died stays stuck (its wakes are folded
      // into that job) until BullMQ sees the job stalled: lock and check short, so that is
      // seconds, not a minute. The lock is renewed every lockDuration/2 while a lane runs.
      lockDuration: 10_000,
      stalledInterval: 5_000,
      maxStalledCount: 1_000,
    });
    this.worker.on('error', (e) => this.logger.warn(`worker: ${e.message}`));
    this.worker.on('failed', (job, e) => this.logger.warn(`lane job ${job?.id} failed (the store sweep will wake the lane again): ${e.message}`));
    await this.worker.waitUntilReady();
  }

  async stats(): Promise<LaneSchedulerStats> {
    const c = await this.queue.getJobCounts('waiting', 'delayed', 'prioritized', 'active');
    return { queued: c.waiting + c.delayed + c.prioritized, running: c.active };
  }

  /** The queue, for a Bull Board (see bull-board.ts). */
  boardAdapter(): Queue {
    return this.queue;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // The worker first: it waits for running handlers, whose re-adds still need the queue.
    await this.worker?.close();
    await this.queue.close();
    await Promise.all([quit(this.workerConnection), quit(this.queueConnection)]);
  }

  private async runJob(handler: LaneHandler, job: Job<LaneRef>): Promise<void> {
    const lane = job.data;
    const outcome = await runLaneHandler(handler, lane, this.logger);
    // If this add fails (Redis down), the job fails: the lane waits for the store sweep.
    if (outcome.status === 'more') await this.queue.add(JOB_NAME, lane, jobOptions(lane, 0));
    else if (outcome.status === 'retry') await this.queue.add(JOB_NAME, lane, jobOptions(lane, Math.max(0, outcome.afterMs)));
  }
}

function laneData(lane: LaneRef): LaneRef {
  return { tenantId: lane.tenantId, versionId: lane.versionId, key: lane.key };
}

function jobOptions(lane: LaneRef, delay: number): JobsOptions {
  return {
    delay,
    deduplication: { id: Buffer.from(laneId(lane)).toString('base64url'), keepLastIfActive: true, reschedule: true },
    // Finished jobs go at once, a few failed ones stay for operators: memory follows lanes in flight.
    removeOnComplete: true,
    removeOnFail: 1000,
  };
}

async function quit(connection: Redis | undefined): Promise<void> {
  if (!connection || connection.status === 'end') return;
  try {
    await connection.quit();
  } catch {
    connection.disconnect(); // already closing or unreachable
  }
}
