import { Logger } from '@nestjs/common';
import { LruMap } from '../common/lru-map';
import { rawJsonOrNull } from '../common/raw-json';
import { toWireEvent } from '../tenant-code/wire-event';
import { RuntimeFailure, runtimeFailure } from '../tenant-code/runtime-failure';
import { HostCallError } from '../tenant-code/host/host-process';
import { CoalescingApplier } from '../tenant-code/executors/coalescing-applier';
import { TenantCode } from '../tenant-code/tenant-code.port';
import { AppMetrics, NO_METRICS, secondsSince } from '../observability/metrics/app-metrics';
import { StoredEvent } from '../store/event-log.port';
import { LaneRecord } from '../store/lanes/lane-records';
import { Lanes } from '../store/lanes/lanes';
import { REMOVED_STATE, StateChange } from '../store/notification-repository.port';
import { ProjectionCatalogRepository, ProjectionVersion } from '../store/projection-catalog.port';
import { LaneRunObserver } from './lane-run-observer';
import { AppendTraces } from '../observability/tracing/append-traces';
import { endWith, Span } from '../observability/tracing/tracing';
import { notificationTraceParent, startLaneRunSpan, startNotificationWriteSpan } from '../observability/tracing/spans';
import { LaneKeyCap } from './lane-key-cap';
import { LaneRef, LaneRunOutcome, LaneRunResult } from './lane-ref';
import { eventKeys, UNRESOLVED_KEY } from './state-key-rule';

export interface LaneRunnerOptions {
  /** Events applied per run before giving other lanes a turn. */
  batch: number;
  /** Delays before each retry of a failing event; past the last, the lane is held. */
  backoffMs: number[];
  /**
   * With several instances on BullMQ: take the lane's lease in the store for each run, renewed
   * every third of `ttlMs` while the run lasts, so one lane never runs in two instances at once
   * even if the queue hands it out twice (a Redis flush, a job seen stalled), and keep a run's
   * write only while the lease is this instance's. Its owner id names this instance. A crashed
   * instance's lease lapses within `ttlMs`.
   */
  lease?: { owner: string; ttlMs: number };
}

export const DEFAULT_LANE_OPTIONS: LaneRunnerOptions = { batch: 200, backoffMs: [100, 500, 2000] };

/**
 * Runs one lane: its inbox events after its checkpoint, in order, through the projection's Apply
 * in the tenant's executor; the new state and the checkpoint are stored together, so a crash at
 * any point replays from the checkpoint and no event is applied twice. A failing event is retried
 * with backoff, then holds this lane only.
 */
export class LaneRunner {
  private readonly logger = new Logger('LaneRunner');
  private readonly versions = new LruMap<string, ProjectionVersion>(10_000);
  /**
   * Versions found dropped (ids are never reused): a run that read its version before the drop
   * must not put it back into the cache after `forget`.
   */
  private readonly dropped = new LruMap<string, true>(10_000);
  private readonly applier: CoalescingApplier;
  /** Lease releases not yet committed: awaited by `close`, so a stopping instance leaves no lease behind. */
  private readonly releasing = new Set<Promise<void>>();

  constructor(
    private readonly lanes: Pick<Lanes, 'inbox' | 'runs'>,
    /** Whether the lane's version still exists (a dropped one's run stops). */
    private readonly catalog: Pick<ProjectionCatalogRepository, 'getVersion'>,
    private readonly runtime: Pick<TenantCode, 'apply' | 'resolveKeys'>,
    private readonly options: LaneRunnerOptions = DEFAULT_LANE_OPTIONS,
    /** Told after each stored run: readers, catch-up, notifications (nothing in unit setups). */
    private readonly observer?: Pick<LaneRunObserver, 'laneApplied'>,
    /** The tenant's keysPerProjection limit, applied to rerouted events as to routed ones. */
    private readonly keyCap?: LaneKeyCap,
    private readonly metrics: AppMetrics = NO_METRICS,
    /** Tracing on: the appends' traces, which a run of their events continues. */
    private readonly traces?: AppendTraces,
  ) {
    // Lanes running at the same time share executor calls.
    this.applier = new CoalescingApplier(runtime);
  }

  /** One run of the lane, as its scheduler hands it out (the scheduler's handler, given at its construction). */
  async run(lane: LaneRef): Promise<LaneRunResult> {
    const lease = this.options.lease;
    if (!lease) return this.runOnce(lane);
    // A late job of a retired version stops here, before the lease (which would write its lane row).
    if (!(await this.version(lane.tenantId, lane.versionId))) return { status: 'idle' };
    const now = Date.now();
    if (!(await this.lanes.runs.acquireLease(lane, lease.owner, now, now + lease.ttlMs))) {
      // No lease for a dropped version (its lane row is never made again): stop, do not retry.
      if (!(await this.catalog.getVersion(lane.tenantId, lane.versionId))) return this.gone(lane);
      return { status: 'retry', afterMs: 100 }; // another instance runs it now
    }
    // Renewed while the run lasts (an Apply may take the whole call deadline): the lease can be
    // short, so that a crashed instance's lanes are taken over in seconds.
    const renewal = setInterval(
      () => {
        const until = Date.now() + lease.ttlMs;
        void this.lanes.runs.renewLease(lane, lease.owner, until).then(
          (held) => held || this.logger.warn(`lease of lane ${lane.key} of ${lane.versionId} lapsed mid-run; its result will not be kept`),
          () => undefined, // the store is unreachable: the run's own write will say so
        );
      },
      Math.max(100, Math.floor(lease.ttlMs / 3)),
    );
    renewal.unref();
    try {
      return await this.runOnce(lane);
    } finally {
      clearInterval(renewal);
      // Not awaited: the run's result does not depend on it, and this instance may take the lane
      // again meanwhile (it owns the lease); another instance waits at most until it commits.
      const released = this.lanes.runs.releaseLease(lane, lease.owner).catch(() => undefined);
      this.releasing.add(released);
      void released.finally(() => this.releasing.delete(released));
    }
  }

  /** Waits for the lease releases still in flight (shutdown: the store closes next; another instance takes the lanes at once). */
  async close(): Promise<void> {
    await Promise.all(this.releasing);
  }

  private async runOnce(lane: LaneRef): Promise<LaneRunResult> {
    const version = await this.version(lane.tenantId, lane.versionId);
    if (!version) return { status: 'idle' }; // retired meanwhile
    const work = await this.lanes.runs.laneWork(lane, this.options.batch);
    // Dropped (deleted, retired, replaced) since it was cached, maybe by another instance.
    if (!work) return this.gone(lane);
    const { lane: rec, events } = work;
    if (rec.heldPosition !== null) return { status: 'held' };
    if (events.length === 0) return { status: 'idle' };
    if (lane.key === UNRESOLVED_KEY) return this.reroute(lane, version, events);
    const span = startLaneRunSpan(this.traces, lane, events);
    return span ? endWith(span, this.applyEvents(lane, version, rec, events, span)) : this.applyEvents(lane, version, rec, events);
  }

  /** The lane's events through Apply, then stored; a failing event retried with backoff, then held. */
  private async applyEvents(
    lane: LaneRef,
    version: ProjectionVersion,
    rec: LaneRecord,
    events: StoredEvent[],
    span?: Span,
  ): Promise<LaneRunOutcome> {
    let result;
    const started = performance.now();
    try {
      result = await this.applier.apply(lane.tenantId, lane.versionId, version.className, {
        state: rawJsonOrNull(rec.state),
        events: events.map(toWireEvent),
        // Which of its keys this lane is: a projection of several keys per event (IResolveKeys) applies with it.
        key: lane.key,
        // A catch-up run notifies nothing, so it needs the last state only (each is still size-checked).
        lastStateOnly: events[events.length - 1].position <= version.targetPosition,
      });
    } catch (e) {
      if (e instanceof HostCallError && e.failure === 'UNAVAILABLE') return { status: 'retry', afterMs: 1000 };
      this.metrics.applied('projection', 'failed', secondsSince(started));
      const message = e instanceof HostCallError ? `${e.failure}: ${e.message}` : String(e);
      return this.fail(lane, events[0].position, message);
    }
    this.metrics.applied('projection', result.ok ? 'ok' : 'failed', secondsSince(started));
    if (result.ok) {
      // Truncated: the host's response budget was reached; the rest goes in the next run.
      const applied = result.truncated ? events.slice(0, result.states.length) : events;
      // Another run of this lane stored first: this one's work is void; run again from its checkpoint.
      if (!(await this.store(lane, version, rec.appliedPosition, applied, result.states, span))) return { status: 'more' };
      return result.truncated || events.length === this.options.batch ? { status: 'more' } : { status: 'idle' };
    }
    // Keep what was applied before the failing event, then count the failure.
    const k = result.failedIndex;
    if (k > 0 && !(await this.store(lane, version, rec.appliedPosition, events.slice(0, k), result.states.slice(0, k), span)))
      return { status: 'more' };
    const failed = events[k];
    const failure = runtimeFailure(toWireEvent(failed), result.error, failed.position);
    return this.fail(lane, failed.position, `${result.error.code}: ${result.error.message}`, failure);
  }

  /**
   * The last state and the checkpoint, with one notification per event: only events after the
   * version's target, so history a deploy catches up on is readable state, not a flood of
   * notifications (see docs/notifications.md).
   */
  private async store(
    lane: LaneRef,
    version: ProjectionVersion,
    fromPosition: number,
    events: StoredEvent[],
    states: string[],
    run?: Span,
  ): Promise<boolean> {
    const last = events[events.length - 1];
    const lastState = states[states.length - 1];
    // States stay the JSON text the host wrote; only notified events carry theirs (a catch-up has none).
    const changes: StateChange[] = events.flatMap((e, i) =>
      e.position > version.targetPosition
        ? [
            {
              position: e.position,
              aggregateId: e.aggregateId,
              aggregateType: e.aggregateType,
              version: e.version,
              timestamp: e.timestamp,
              state: states[i],
              // The trace context sent with the event's append (stored with it): every instance, after any restart.
              ...(e.traceParent ? { traceParent: e.traceParent } : {}),
              ...(e.traceState ? { traceState: e.traceState } : {}),
            },
          ]
        : [],
    );
    // Tracing on: each notification continues its event's trace through this instance's own span
    // when it has one (the append's remembered span, else the caller's stored one).
    const write = startNotificationWriteSpan(run, version.projectionId, changes.length);
    if (write)
      for (const c of changes) c.traceParent = notificationTraceParent(write, this.traces?.at(lane.tenantId, c.position) ?? c.traceParent);
    const applied = this.lanes.runs.applied(lane, {
      // A removed key's state (IDeletableProjection) is none: reads answer 404, the key limit stops counting it.
      state: lastState === REMOVED_STATE ? null : lastState,
      fromPosition,
      appliedPosition: last.position,
      updatedAt: last.timestamp,
      ...(changes.length ? { notify: { projectionId: version.projectionId, changes } } : {}),
      // The fence: kept only while this instance holds the lease (see LaneRunnerOptions.lease).
      ...(this.options.lease ? { leaseOwner: this.options.lease.owner } : {}),
    });
    const kept = await endWith(write, applied);
    if (kept) this.observer?.laneApplied(lane, last.position, changes.length > 0 ? version.projectionId : null);
    return kept;
  }

  /**
   * The events whose ResolveKey threw, after an operator's retry: resolve them again and hand them
   * to their lanes. A lane that has already applied past such an event does not take it (its order
   * would break); skip is then the operator's answer.
   */
  private async reroute(lane: LaneRef, version: ProjectionVersion, events: StoredEvent[]): Promise<LaneRunResult> {
    let keys;
    try {
      keys = await this.runtime.resolveKeys(lane.tenantId, lane.versionId, version.className, events.map(toWireEvent));
    } catch (e) {
      return this.fail(lane, events[0].position, e instanceof HostCallError ? `${e.failure}: ${e.message}` : String(e));
    }
    // The same rules as routing: a thrown ResolveKey, or a key no lane can hold.
    const answers = keys.map(eventKeys);
    const bad = answers.findIndex((a) => 'error' in a);
    const good = bad === -1 ? events.length : bad;
    let items = events.slice(0, good).flatMap((e, i) => {
      const a = answers[i];
      return 'keys' in a ? a.keys.map((key) => ({ key, position: e.position })) : [];
    });
    // The key limit as in routing: the events up to the first key past it go on; it and the rest stay held here.
    let capped: { error: string; position: number } | null = null;
    if (this.keyCap && items.length) {
      const c = await this.keyCap.admit(lane.tenantId, lane.versionId, items);
      if (c.refused) {
        capped = c.refused;
        items = items.filter((it) => it.position < c.refused!.position);
      }
    }
    const through = capped ? events.findIndex((e) => e.position === capped!.position) : good;
    if (items.length && !(await this.lanes.inbox.route(lane, items, 0))) return this.gone(lane);
    if (through > 0) await this.lanes.runs.consume(lane, events[through - 1].position);
    // The lanes handed events to: their scheduler wakes them with this run's result.
    const wake = items.map((it) => ({ tenantId: lane.tenantId, versionId: lane.versionId, key: it.key }));
    const handedOn = (outcome: LaneRunOutcome): LaneRunResult => (wake.length ? { ...outcome, wake } : outcome);
    if (capped) return handedOn(await this.hold(lane, capped.position, capped.error));
    if (bad !== -1) {
      const a = answers[bad];
      const thrown = keys[bad];
      const failure =
        thrown !== null && typeof thrown === 'object' && 'error' in thrown
          ? runtimeFailure(toWireEvent(events[bad]), thrown.error, events[bad].position)
          : undefined;
      return handedOn(await this.fail(lane, events[bad].position, 'error' in a ? a.error : '', failure));
    }
    return handedOn({ status: 'idle' });
  }

  /** Held at once: a limit, unlike a failure, will not pass on a retry. */
  private async hold(lane: LaneRef, position: number, error: string): Promise<LaneRunOutcome> {
    await this.lanes.runs.failed(lane, { position, error, hold: true });
    this.logger.warn(`lane ${lane.key} of ${lane.versionId} held at position ${position}: ${error}`);
    return { status: 'held' };
  }

  /** `failure`: the tenant code's exception, event and frames, kept with the hold when it is set. */
  private async fail(lane: LaneRef, position: number, error: string, failure?: RuntimeFailure): Promise<LaneRunOutcome> {
    // One retry per backoff step; the failure after the last step holds the lane.
    const holdAfterAttempts = this.options.backoffMs.length + 1;
    const attempts = await this.lanes.runs.failed(lane, {
      position,
      error,
      holdAfterAttempts,
      ...(failure ? { failure: JSON.stringify(failure) } : {}),
    });
    if (attempts >= holdAfterAttempts) {
      this.logger.warn(`lane ${lane.key} of ${lane.versionId} held at position ${position}: ${error}`);
      return { status: 'held' };
    }
    return { status: 'retry', afterMs: this.options.backoffMs[attempts - 1] };
  }

  /** A dropped version: later jobs of its lanes find nothing to do, and it is never cached again. */
  forget(tenantId: string, versionId: string): void {
    const key = `${tenantId}\u0000${versionId}`;
    this.dropped.set(key, true);
    this.versions.delete(key);
  }

  /** A removed tenant imported again brings back its version ids (src/tenant-transfer): they run again. */
  revive(tenantId: string, versionId: string): void {
    this.dropped.delete(`${tenantId}\u0000${versionId}`);
  }

  private gone(lane: LaneRef): LaneRunOutcome {
    this.forget(lane.tenantId, lane.versionId);
    return { status: 'idle' };
  }

  private async version(tenantId: string, versionId: string): Promise<ProjectionVersion | null> {
    const key = `${tenantId}\u0000${versionId}`;
    if (this.dropped.get(key)) return null;
    const hit = this.versions.get(key);
    if (hit) return hit;
    const v = await this.catalog.getVersion(tenantId, versionId);
    // Forgotten while this read was under way: the store answered from before the drop.
    if (v && !this.dropped.get(key)) this.versions.set(key, v);
    return this.dropped.get(key) ? null : v;
  }
}
