import { AppliedSignal } from '../../src/lanes/applied-signal';
import { InProcessLaneScheduler } from '../../src/lanes/in-process-lane-scheduler';
import { LaneApplied, NO_LANE_APPLIED } from '../../src/lanes/lane-applied.port';
import { LaneEngine, LaneEngineOptions } from '../../src/lanes/lane-engine';
import { LaneRunObserver } from '../../src/lanes/lane-run-observer';
import { DEFAULT_LANE_OPTIONS, LaneRunner, LaneRunnerOptions } from '../../src/lanes/lane-runner';
import { LaneHandler, LaneScheduler } from '../../src/lanes/lane-scheduler.port';
import { VersionCatchUp } from '../../src/lanes/version-catch-up';
import { AppMetrics } from '../../src/observability/metrics/app-metrics';
import { RuntimePool } from '../../src/tenant-code/runtime-pool';
import { EventLog } from '../../src/store/event-log.port';
import { Lanes } from '../../src/store/lanes/lanes';
import { ProjectionCatalogRepository } from '../../src/store/projection-catalog.port';

export interface LaneMachineryParts {
  log: EventLog;
  catalog: ProjectionCatalogRepository;
  lanes: Pick<Lanes, 'inbox' | 'runs' | 'sweep'>;
  runtime: Pick<RuntimePool, 'resolveKeys' | 'apply' | 'unload'>;
  /** The scheduler, made with its handler (default: in-process, concurrency 4). */
  scheduler?: (handler: LaneHandler) => LaneScheduler;
  runner?: LaneRunnerOptions;
  engine?: LaneEngineOptions;
  laneApplied?: LaneApplied;
  metrics?: AppMetrics;
}

/** The lanes made the way LanesModule makes them (scheduler with its runner, runner with its observer), for tests and benches. */
export function laneMachinery(parts: LaneMachineryParts) {
  const { log, catalog, lanes, runtime } = parts;
  const engineOptions = parts.engine ?? { sweepMs: 2000 };
  const signal = new AppliedSignal();
  const catchUp = new VersionCatchUp(catalog, lanes.sweep, runtime);
  const observer = new LaneRunObserver(signal, catchUp, parts.laneApplied ?? NO_LANE_APPLIED);
  const runner = new LaneRunner(
    lanes,
    catalog,
    runtime,
    parts.runner ?? DEFAULT_LANE_OPTIONS,
    observer,
    engineOptions.keyCap,
    parts.metrics,
    engineOptions.traces,
  );
  const scheduler = (parts.scheduler ?? ((handler) => new InProcessLaneScheduler(handler, { concurrency: 4 })))(runner);
  const engine = new LaneEngine(log, catalog, lanes, runtime, scheduler, runner, catchUp, engineOptions);
  return { engine, runner, scheduler, catchUp, signal };
}
