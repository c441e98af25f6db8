import { EventLog } from '../store/event-log.port';
import { TenantCode } from '../tenant-code/tenant-code.port';
import { compareStates, FailureBook, removedFrom } from './dry-run-report';
import { DryRunLimits, DryRunOptions, KeySample } from './dry-run-options';
import { DryRunReport } from './dry-run-views';
import { DryRunProgress, replayHistory } from './history-replay';
import { StateFold } from './state-fold';

export interface ReducerDryRunInput {
  tenantId: string;
  aggregateType: string;
  /** The candidate's compiled assembly (loaded from memory, never an upload) and class. */
  assemblyId: string;
  className: string;
  /** The reducer bound to the type now (null: none, every aggregate is added). */
  bound: { reducerId: string; className: string } | null;
  options: DryRunOptions;
  limits: DryRunLimits;
  progress: DryRunProgress;
}

/**
 * A reducer candidate over the aggregates of one type: each aggregate's events (the log filtered by
 * the type, in position order, so in version order within an aggregate) folded with the candidate
 * and, beside it, with the reducer bound now — the current state exactly as a state read computes it
 * from the log, with no snapshot's age in the way. Writes nothing: no snapshot, no binding.
 */
export class ReducerDryRun {
  constructor(
    private readonly log: EventLog,
    private readonly code: TenantCode,
  ) {}

  async run(input: ReducerDryRunInput): Promise<DryRunReport> {
    const { tenantId, aggregateType, options, limits } = input;
    const failures = new FailureBook();
    const sample = new KeySample(options);
    const candidate = new StateFold(this.code, tenantId, input.assemblyId, input.className, limits, failures);
    // The current states are not the candidate's to report: their failures (aggregates the bound reducer cannot fold) are left out.
    const current = input.bound ? new StateFold(this.code, tenantId, input.bound.reducerId, input.bound.className, limits) : null;
    const replayed = await replayHistory({
      read: (after, limit) =>
        this.log.readLog(tenantId, { direction: 'forward', afterPosition: after, limit, aggregateTypes: [aggregateType] }),
      route: async (events) => events.filter((e) => sample.admits(e.aggregateId)).map((event) => ({ key: event.aggregateId, event })),
      folds: current ? [candidate, current] : [candidate],
      options,
      limits,
      head: await this.log.headPosition(tenantId),
      progress: input.progress,
    });
    const whole = replayed.truncatedReason === null && options.fromPosition === 1 && options.toPosition === null && sample.all;
    // An aggregate the bound reducer cannot fold has no current state (a state read answers REDUCER_FAILED):
    // the candidate's state for it counts as added. (A range starting after an aggregate's first event
    // folds both from an empty state: compared alike.)
    const baseline = new Map([...(current?.states ?? [])].filter(([id]) => !current?.held.has(id)));
    const removed = whole ? removedFrom(baseline, candidate.states, candidate.held) : null;
    const { keys, diffs } = compareStates(candidate.states, baseline, { removed, held: candidate.held });
    return {
      candidate: { className: input.className },
      baseline: input.bound ? { reducerId: input.bound.reducerId, className: input.bound.className } : null,
      range: { fromPosition: replayed.fromPosition, toPosition: replayed.toPosition },
      eventsRead: input.progress.eventsRead,
      eventsApplied: candidate.eventsApplied,
      truncated: replayed.truncatedReason !== null,
      truncatedReason: replayed.truncatedReason,
      compared: whole ? 'all' : 'touched',
      keys,
      diffs,
      failures: failures.list(),
    };
  }
}
