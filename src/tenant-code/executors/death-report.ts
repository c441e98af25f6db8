import { HostFailure } from '../host/host-process';
import { ExecutorCall, ExecutorListener } from './executor-call';

/**
 * What an executor's host death is blamed on, and the calls it interrupted. Every request in flight
 * fails in the same tick, the oldest first (and a load before the batch needing it): each tenant
 * blamed is reported at once (`offended`); the interrupted calls are handed back once, in order,
 * after all of them (`interrupted`), with the tenants blamed (whose queued calls may have to follow).
 */
export class DeathReports<E> {
  private current?: { calls: ExecutorCall[]; offenders: Set<string> };

  constructor(
    private readonly executor: E,
    private readonly listener: ExecutorListener<E>,
  ) {}

  /** The tenant is to blame (`counted`: its call stalled a shared executor, for which it was blamed already). */
  blame(tenantId: string, failure: HostFailure, counted = false): void {
    this.report().offenders.add(tenantId);
    this.listener.offended(this.executor, tenantId, failure, counted);
  }

  /** The tenant moves apart without a failure (its stalled call was replaced): its calls follow it. */
  moveApart(tenantId: string): void {
    this.report().offenders.add(tenantId);
  }

  /** Sent and never run: it runs again. */
  rerun(call: ExecutorCall): void {
    this.report().calls.push(call);
  }

  /** A death in this tick: `interrupted` is told once, after it, even of no call. */
  open(): void {
    this.report();
  }

  private report(): { calls: ExecutorCall[]; offenders: Set<string> } {
    if (this.current) return this.current;
    const report = (this.current = { calls: [], offenders: new Set<string>() });
    queueMicrotask(() => {
      this.current = undefined;
      this.listener.interrupted(this.executor, report.calls, [...report.offenders]);
    });
    return report;
  }
}
