import { randomUUID } from 'node:crypto';
import * as os from 'node:os';
import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { AppMetrics } from '../observability/metrics/app-metrics';
import { AppendTraces } from '../observability/tracing/append-traces';
import { tracingOn } from '../observability/tracing/tracing';
import { TenantCode } from '../tenant-code/tenant-code.port';
import { LaneKeyCap } from './lane-key-cap';
import { LaneRunObserver } from './lane-run-observer';
import { DEFAULT_LANE_OPTIONS, LaneRunner, LaneRunnerOptions } from './lane-runner';
import { LaneScheduler } from './lane-scheduler.port';
import { VersionCatchUp } from './version-catch-up';

/**
 * The lanes' settings from config. A lease goes with the BullMQ scheduler (the same choice as
 * LanesModule's scheduler, by REDIS_URL): BullMQ hands a lane to one worker of all instances at a
 * time, and the lease keeps that true when it hands one out twice (a flush, a job seen stalled). The
 * in-process scheduler takes no lease, even with several instances on PostgreSQL (each runs the
 * lanes of its own appends and of its sweep): two of them may then run one lane side by side, and
 * the checkpoint guard of the write keeps one run's result (docs/operations.md, "Several
 * instances"); two lease writes (two commits) per run would cost every single-instance PostgreSQL
 * service, and a crashed instance's lanes would wait for the lease instead of the next sweep.
 */
@Injectable()
export class LaneSettings {
  readonly runner: LaneRunnerOptions;
  readonly sweepMs: number;
  /** Tracing on: each recent append's trace by position, for its routing and its lane runs. */
  readonly traces = tracingOn() ? new AppendTraces() : undefined;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const lease = config.redisUrl
      ? { owner: `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`, ttlMs: config.lanes.leaseMs }
      : undefined;
    this.runner = { ...DEFAULT_LANE_OPTIONS, backoffMs: config.lanes.backoffMs, lease };
    this.sweepMs = config.lanes.sweepMs;
  }
}

/** What LaneRunner is made with besides the store's lane roles and catalog (typed, so no hand-ordered inject list). */
@Injectable()
export class LaneRunnerParts {
  constructor(
    readonly runtime: TenantCode,
    readonly settings: LaneSettings,
    readonly observer: LaneRunObserver,
    readonly keyCap: LaneKeyCap,
    readonly metrics: AppMetrics,
  ) {}
}

/** What LaneEngine is made with besides the store's log, catalog and lane roles. */
@Injectable()
export class LaneEngineParts {
  constructor(
    readonly runtime: TenantCode,
    readonly scheduler: LaneScheduler,
    readonly runner: LaneRunner,
    readonly catchUp: VersionCatchUp,
    readonly settings: LaneSettings,
    readonly keyCap: LaneKeyCap,
  ) {}
}
