import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '../common/domain-error';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { rawJsonOrNull } from '../common/raw-json';
import { Binding } from '../store/reducer-state.port';
import { HostCallError } from '../tenant-code/host/host-process';
import { CoalescingApplier } from '../tenant-code/executors/coalescing-applier';
import { TenantCode } from '../tenant-code/tenant-code.port';
import { WireEvent } from '../tenant-code/host/runtime-protocol';
import { RuntimeFailure, runtimeFailure } from '../tenant-code/runtime-failure';
import { AppMetrics, NO_METRICS, secondsSince } from '../observability/metrics/app-metrics';

/** The state after a run of events, or where and why the reducer stopped. */
export interface Folded {
  /** JSON text of the state after the last event applied (the base state when none was), as the host wrote it. */
  state: string;
  /** Version of the event the reducer failed on, if it did. */
  failedVersion?: number;
  error?: string;
  /**
   * With failedVersion: the exception's type, the event and the tenant's frames (the reducer-rejection
   * path and the state read pass these fields through as they are).
   */
  failure?: FoldFailure;
}

/**
 * A failed fold's account: the RuntimeFailure fields and, when the host answered one, its item code,
 * message and whatever else it added (the refusal of an append reads the code; views strip what is not theirs).
 */
export type FoldFailure = RuntimeFailure & { code?: string; message?: string; stackTrace?: string };

/** The RuntimeFailure fields of a fold's failure: the host's code, message and raw stack trace are not a client's. */
export function failureDetails(failure: FoldFailure | undefined): RuntimeFailure | undefined {
  if (!failure) return undefined;
  const { code: _code, message: _message, stackTrace: _stack, ...details } = failure;
  return details as RuntimeFailure;
}

export interface FoldInput {
  /** JSON text of the state before the events (null: the reducer's `new TState()`). */
  state: string | null;
  events: WireEvent[];
}

const UNAVAILABLE_RETRY_MS = 250;
/**
 * A tenant's reducer calls in flight at once; folds asked for meanwhile go together in the next
 * call (issue 25 item 4). Two, so one call is being answered while the next is already queued at
 * the executor; a call carries at most 64 folds, each under the call's deadline.
 */
const REDUCER_CALLS_IN_FLIGHT = 2;
const REDUCER_GROUPS_PER_CALL = 64;

/**
 * Folds events through a bound reducer in the tenant's executor (coalesced with other folds of
 * the same tick by CoalescingApplier). Tenant faults (a throw, a deadline, a crash of its
 * process) become a failure at an event — events are facts and stay stored. An executor that
 * cannot be started at all is the service's fault: callers wait up to `waitMs`, then get 503.
 */
@Injectable()
export class ReducerRunner {
  private readonly applier: CoalescingApplier;
  private readonly waitMs: number;

  constructor(
    @Inject(TenantCode) runtime: Pick<TenantCode, 'apply'>,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly metrics: AppMetrics = NO_METRICS,
  ) {
    this.waitMs = config.runtime.unavailableWaitMs;
    // Every fold here is on a request's path (an append, a state read): ahead of the tenant's lanes.
    this.applier = new CoalescingApplier(runtime, {
      urgent: true,
      callsInFlight: REDUCER_CALLS_IN_FLIGHT,
      maxGroupsPerCall: REDUCER_GROUPS_PER_CALL,
    });
  }

  async fold(tenantId: string, binding: Binding, input: FoldInput): Promise<Folded> {
    const deadline = Date.now() + this.waitMs;
    // The text goes to the host verbatim: a state never passes through a JavaScript value.
    const state = rawJsonOrNull(input.state);
    for (;;) {
      const started = performance.now();
      try {
        // Only the last state is used: asking for it alone keeps a catch-up page of big states small.
        const r = await this.applier.apply(tenantId, binding.reducerId, binding.className, {
          state,
          events: input.events,
          lastStateOnly: true,
        });
        this.metrics.applied('reducer', r.ok ? 'ok' : 'failed', secondsSince(started));
        if (r.ok) {
          if (r.states.length === 0) return { state: input.state ?? '{}' };
          return { state: r.states[r.states.length - 1] };
        }
        const before = r.states.length ? r.states[r.states.length - 1] : (input.state ?? '{}');
        const failed = input.events[r.failedIndex];
        return {
          state: before,
          failedVersion: failed.version,
          error: `${r.error.code}: ${r.error.message}`,
          failure: { ...r.error, ...runtimeFailure(failed, r.error) },
        };
      } catch (e) {
        if (!(e instanceof HostCallError)) throw e;
        if (e.failure === 'UNAVAILABLE') {
          if (Date.now() > deadline)
            throw new DomainError('RUNTIME_UNAVAILABLE', 'the C# runtime is not available; nothing was stored, retry later');
          await new Promise((r) => setTimeout(r, UNAVAILABLE_RETRY_MS));
          continue;
        }
        // The tenant's code timed out, crashed its process or was refused at load.
        this.metrics.applied('reducer', 'failed', secondsSince(started));
        const why =
          e.failure === 'TIMEOUT'
            ? 'the reducer exceeded its deadline'
            : e.failure === 'TENANT_MEMORY_EXCEEDED'
              ? e.message // the host's own words: how much the tenant would hold, and the cap
              : `the reducer's process failed (${e.failure})`;
        return {
          state: input.state ?? '{}',
          failedVersion: input.events[0].version,
          error: `${e.failure}: ${why}`,
          failure: runtimeFailure(input.events[0]),
        };
      }
    }
  }
}
