import { JobsOptions } from 'bullmq';
import Redis from 'ioredis';
import { laneId } from './in-process-lane-scheduler';
import { LaneRef } from './lane-ref';

/** The BullMQ lane scheduler's options and Redis conventions: its jobs, their dedupe ids and options, its script. */

export interface BullmqLaneSchedulerOptions {
  redisUrl: string;
  /** Jobs this instance's worker runs at once. */
  concurrency?: number;
  /** Lanes of one tenant this instance has in Redis (waiting, running or waiting out a retry) at once; default the concurrency. */
  maxInFlightPerTenant?: number;
  /** Every service instance sharing lanes must use the same queue name. */
  queueName?: string;
  /** Tags this instance's Redis connections (CLIENT LIST), so operators and tests can count them. */
  instanceId?: string;
  /**
   * The worker's job lock (renewed every half of it while a lane runs); a job of a crashed instance
   * is seen stalled within 1.5 × this and handed to another worker. Default 10 s.
   */
  lockMs?: number;
}

/** A lane this instance put in Redis. */
export interface FedLane {
  lane: LaneRef;
  /** The add returned: until then no check may conclude that its job finished. */
  confirmed: boolean;
  /** Woken again by this instance while in Redis: its job may have a follow-up that only Redis knows of. */
  rewoken: boolean;
}

/** Lanes per addBulk or per script call. */
export const WAKE_CHUNK = 1000;
export const JOB_NAME = 'lane';

/**
 * For each dedupe key: 1 while the lane's job (or the follow-up BullMQ creates when it finishes)
 * still exists, 0 once it has finished or vanished. A key pointing at a job that is gone (a Redis
 * outage) counts as finished, as BullMQ's own stale-key recovery treats it. ARGV[1]: the job key prefix.
 */
export const LANE_JOBS_ALIVE = `
local out = {}
for i, key in ipairs(KEYS) do
  local id = redis.call('GET', key)
  out[i] = id and redis.call('EXISTS', ARGV[1] .. id) or 0
end
return out`;

export interface LaneJobsAlive {
  laneJobsAlive(numKeys: number, ...keysThenPrefix: string[]): Promise<number[]>;
}

export function laneData(lane: LaneRef): LaneRef {
  return { tenantId: lane.tenantId, versionId: lane.versionId, key: lane.key };
}

export const dedupeId = (laneIdText: string) => Buffer.from(laneIdText).toString('base64url');

export function jobOptions(lane: LaneRef, delay: number): JobsOptions {
  return {
    delay,
    deduplication: { id: dedupeId(laneId(lane)), keepLastIfActive: true, reschedule: true },
    // Finished jobs go at once, a few failed ones stay for operators: memory follows lanes in flight.
    removeOnComplete: true,
    removeOnFail: 1000,
  };
}

export async function quit(connection: Redis | undefined): Promise<void> {
  if (!connection || connection.status === 'end') return;
  try {
    await connection.quit();
  } catch {
    connection.disconnect(); // already closing or unreachable
  }
}
