import { DomainError } from '../common/domain-error';
import { Binding } from '../store/reducer-state.port';
import { HostCallError } from '../runtime/host-process';
import { RuntimePool } from '../runtime/runtime-pool';
import { WireEvent } from '../runtime/runtime-protocol';

/** The state after a run of events, or where and why the reducer stopped. */
export interface Folded {
  /** JSON text of the state after the last event applied (the base state when none was). */
  state: string;
  /** Version of the event the reducer failed on, if it did. */
  failedVersion?: number;
  error?: string;
}

const UNAVAILABLE_RETRY_MS = 250;

/**
 * Folds events through a bound reducer in the tenant's executor. Tenant faults (a throw, a
 * deadline, a crash of its process) become a failure at an event — events are facts and stay
 * stored; an executor that cannot be started at all is the service's fault: appends wait up to
 * `waitMs` for it, then answer 503 with nothing stored.
 */
export class ReducerRunner {
  constructor(
    private readonly runtime: Pick<RuntimePool, 'apply'>,
    private readonly waitMs: number,
  ) {}

  async fold(tenantId: string, binding: Binding, baseState: string | null, events: WireEvent[]): Promise<Folded> {
    const [r] = await this.applyGroups(tenantId, binding, [{ state: baseState, events }]);
    return r;
  }

  /** Several aggregates in one host call (catch-up). */
  async applyGroups(tenantId: string, binding: Binding, groups: { state: string | null; events: WireEvent[] }[]): Promise<Folded[]> {
    const deadline = Date.now() + this.waitMs;
    for (;;) {
      try {
        const results = await this.runtime.apply(
          tenantId,
          binding.reducerId,
          binding.className,
          groups.map((g) => ({ state: g.state === null ? null : JSON.parse(g.state), events: g.events })),
        );
        return results.map((r, i) => {
          const g = groups[i];
          if (r.ok) return { state: r.states.length ? JSON.stringify(r.states[r.states.length - 1]) : (g.state ?? '{}') };
          const before = r.states.length ? JSON.stringify(r.states[r.states.length - 1]) : (g.state ?? '{}');
          return { state: before, failedVersion: g.events[r.failedIndex].version, error: `${r.error.code}: ${r.error.message}` };
        });
      } catch (e) {
        if (!(e instanceof HostCallError)) throw e;
        if (e.failure === 'UNAVAILABLE') {
          if (Date.now() > deadline) throw new DomainError('RUNTIME_UNAVAILABLE', 'the C# runtime is not available; nothing was stored, retry later');
          await new Promise((r) => setTimeout(r, UNAVAILABLE_RETRY_MS));
          continue;
        }
        // The tenant's code timed out, crashed its process or was refused at load: a failure at
        // the first event of each group (which one cannot be told).
        const why = e.failure === 'TIMEOUT' ? 'the reducer exceeded its deadline' : `the reducer's process failed (${e.failure})`;
        return groups.map((g) => ({ state: g.state ?? '{}', failedVersion: g.events[0].version, error: `${e.failure}: ${why}` }));
      }
    }
  }
}
