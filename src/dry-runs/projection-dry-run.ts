import { eventKeys } from '../lanes/state-key-rule';
import { EventLog, StoredEvent } from '../store/event-log.port';
import { LaneReads } from '../store/lanes/lane-reads.port';
import { ItemError } from '../tenant-code/host/runtime-protocol';
import { TenantCode } from '../tenant-code/tenant-code.port';
import { toWireEvent } from '../tenant-code/wire-event';
import { compareStates, FailureBook, RemovedKeys } from './dry-run-report';
import { DryRunLimits, DryRunOptions, KeySample } from './dry-run-options';
import { DryRunReport } from './dry-run-views';
import { DryRunProgress, replayHistory } from './history-replay';
import { Routed, StateFold } from './state-fold';

/** Live lanes read per page for the comparison. */
const LANE_PAGE = 1_000;

export interface ProjectionDryRunInput {
  tenantId: string;
  /** The candidate's compiled assembly (loaded from memory, never an upload) and class. */
  assemblyId: string;
  className: string;
  /** The version whose stored lane states the candidate is compared with (null: none, every key is added). */
  liveVersionId: string | null;
  options: DryRunOptions;
  limits: DryRunLimits;
  progress: DryRunProgress;
}

/**
 * A projection candidate over the tenant's log: its ResolveKey(s) routes each event (the lanes'
 * key rule, the same refusals), its Apply folds each key's events in memory (StateFold), then its
 * states are compared with the live version's stored lane states. Reads the log and the live
 * lanes; writes nothing, wakes nothing.
 */
export class ProjectionDryRun {
  constructor(
    private readonly log: EventLog,
    private readonly lanes: LaneReads,
    private readonly code: TenantCode,
  ) {}

  async run(input: ProjectionDryRunInput): Promise<DryRunReport> {
    const { tenantId, assemblyId, className, options, limits } = input;
    const failures = new FailureBook();
    const sample = new KeySample(options);
    const fold = new StateFold(this.code, tenantId, assemblyId, className, limits, failures);
    const replayed = await replayHistory({
      read: (after, limit) => this.log.readAll(tenantId, after, limit),
      route: (events) => this.route(tenantId, assemblyId, className, events, sample, failures),
      folds: [fold],
      options,
      limits,
      head: await this.log.headPosition(tenantId),
      progress: input.progress,
    });
    const whole = replayed.truncatedReason === null && options.fromPosition === 1 && options.toPosition === null && sample.all;
    // Keys the candidate removed are compared even when the run is partial: their removal is its doing.
    const removed = whole || fold.removed.size > 0 ? new RemovedKeys() : null;
    const live = await this.liveStates(input, fold, removed, whole);
    const { keys, diffs } = compareStates(fold.states, live, { removed, held: fold.held });
    return {
      candidate: { className },
      baseline: input.liveVersionId ? { versionId: input.liveVersionId } : null,
      range: { fromPosition: replayed.fromPosition, toPosition: replayed.toPosition },
      eventsRead: input.progress.eventsRead,
      eventsApplied: fold.eventsApplied,
      truncated: replayed.truncatedReason !== null,
      truncatedReason: replayed.truncatedReason,
      compared: whole ? 'all' : 'touched',
      keys,
      diffs,
      failures: failures.list(),
    };
  }

  private async route(
    tenantId: string,
    assemblyId: string,
    className: string,
    events: StoredEvent[],
    sample: KeySample,
    failures: FailureBook,
  ): Promise<Routed[]> {
    const resolved = await this.code.resolveKeys(tenantId, assemblyId, className, events.map(toWireEvent));
    const routed: Routed[] = [];
    events.forEach((event, i) => {
      const r = resolved[i];
      const k = eventKeys(r);
      if ('error' in k) {
        // A refusal the live router would hold in its '!unresolved' lane: reported, not folded.
        const hostError: ItemError | null = r !== null && typeof r === 'object' && !Array.isArray(r) ? r.error : null;
        const { stackTrace: _host, code, message, ...extra }: Omit<ItemError, 'code'> & { code: string } = hostError ?? splitCode(k.error);
        failures.record(event.eventType, {
          ...extra,
          eventId: event.eventId,
          position: event.position,
          aggregateId: event.aggregateId,
          key: null,
          code,
          message,
        });
        return;
      }
      for (const key of k.keys) if (sample.admits(key)) routed.push({ key, event });
    });
    return routed;
  }

  /**
   * The live version's stored states of the keys the candidate folded; the others are only counted
   * (and the first few named) as removed when `removed` is given: memory stays bounded by the fold's.
   */
  private async liveStates(
    input: ProjectionDryRunInput,
    fold: StateFold,
    removed: RemovedKeys | null,
    whole: boolean,
  ): Promise<Map<string, string>> {
    const live = new Map<string, string>();
    if (!input.liveVersionId) return live;
    const version = { tenantId: input.tenantId, versionId: input.liveVersionId };
    for (let afterKey = ''; ;) {
      const page = await this.lanes.listLanes(version, { afterKey, limit: LANE_PAGE });
      for (const lane of page) {
        if (lane.state === null) continue;
        if (fold.states.has(lane.key) || fold.held.has(lane.key)) live.set(lane.key, lane.state);
        else if (whole || fold.removed.has(lane.key)) removed?.add(lane.key);
      }
      if (page.length < LANE_PAGE) return live;
      afterKey = page[page.length - 1].key;
    }
  }
}

/** The lanes' refusal text `CODE: message` as its two parts. */
function splitCode(text: string): { code: string; message: string } {
  const at = text.indexOf(': ');
  return at < 0 ? { code: 'INVALID_KEY', message: text } : { code: text.slice(0, at), message: text.slice(at + 2) };
}
