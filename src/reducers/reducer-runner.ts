import { DomainError } from '../common/domain-error';
import { Binding } from '../store/reducer-state.port';
import { HostCallError } from '../runtime/host-process';
import { RuntimePool } from '../runtime/runtime-pool';
import { WireEvent } from '../runtime/runtime-protocol';

/** The state after a run of events, or where and why the reducer stopped. */
export interface Folded {
  /** JSON text of the state after the last event applied (the base state when none was). */
  state: string;
  /** The same state as a value, when the runtime gave one (saves re-parsing for the response). */
  value?: unknown;
  /** Version of the event the reducer failed on, if it did. */
  failedVersion?: number;
  error?: string;
}

export interface FoldInput {
  /** JSON text of the state before the events (null: the reducer's `new TState()`). */
  state: string | null;
  /** The same state as a value, if the caller has it. */
  value?: unknown;
  events: WireEvent[];
}

const UNAVAILABLE_RETRY_MS = 250;

interface Waiting {
  input: FoldInput;
  resolve: (f: Folded) => void;
  reject: (e: unknown) => void;
}

/**
 * Folds events through a bound reducer in the tenant's executor. Folds of different aggregates
 * that arrive in the same tick go to the host as one call (one group each): the JSON envelope and
 * the round trip are paid once. Tenant faults (a throw, a deadline, a crash of its process)
 * become a failure at an event — events are facts and stay stored; when a shared call dies, its
 * groups are retried one by one so one poison event cannot fail its neighbours. An executor that
 * cannot be started at all is the service's fault: callers wait up to `waitMs`, then get 503.
 */
export class ReducerRunner {
  private readonly waiting = new Map<string, { binding: Binding; tenantId: string; items: Waiting[] }>();
  private scheduled = false;

  constructor(
    private readonly runtime: Pick<RuntimePool, 'apply'>,
    private readonly waitMs: number,
  ) {}

  fold(tenantId: string, binding: Binding, input: FoldInput): Promise<Folded> {
    return new Promise((resolve, reject) => {
      const key = `${tenantId}\u0000${binding.reducerId}\u0000${binding.className}`;
      let q = this.waiting.get(key);
      if (!q) this.waiting.set(key, (q = { binding, tenantId, items: [] }));
      q.items.push({ input, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Several aggregates in one host call, each group's failure its own. */
  async applyGroups(tenantId: string, binding: Binding, groups: FoldInput[]): Promise<Folded[]> {
    const deadline = Date.now() + this.waitMs;
    for (;;) {
      try {
        const results = await this.runtime.apply(
          tenantId,
          binding.reducerId,
          binding.className,
          groups.map((g) => ({ state: g.value !== undefined ? g.value : g.state === null ? null : JSON.parse(g.state), events: g.events })),
        );
        return results.map((r, i) => {
          const g = groups[i];
          if (r.ok) {
            if (r.states.length === 0) return { state: g.state ?? '{}' };
            const value = r.states[r.states.length - 1];
            return { state: JSON.stringify(value), value };
          }
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
        if (groups.length > 1) {
          const alone: Folded[] = [];
          for (const g of groups) alone.push(...(await this.applyGroups(tenantId, binding, [g])));
          return alone;
        }
        // The tenant's code timed out, crashed its process or was refused at load.
        const why = e.failure === 'TIMEOUT' ? 'the reducer exceeded its deadline' : `the reducer's process failed (${e.failure})`;
        return [{ state: groups[0].state ?? '{}', failedVersion: groups[0].events[0].version, error: `${e.failure}: ${why}` }];
      }
    }
  }

  private flush(): void {
    this.scheduled = false;
    const queues = [...this.waiting.values()];
    this.waiting.clear();
    for (const q of queues) {
      this.applyGroups(q.tenantId, q.binding, q.items.map((w) => w.input)).then(
        (results) => results.forEach((r, i) => q.items[i].resolve(r)),
        (e) => q.items.forEach((w) => w.reject(e)),
      );
    }
  }
}
