import { HostCallError } from '../host/host-process';
import { TenantCode } from '../tenant-code.port';
import { ApplyGroupPayload, ApplyGroupResult } from '../host/runtime-protocol';

export type ApplyGroup = ApplyGroupPayload;

interface Waiting {
  group: ApplyGroup;
  resolve: (r: ApplyGroupResult) => void;
  reject: (e: unknown) => void;
}

interface CallQueue {
  tenantId: string;
  assemblyId: string;
  className: string;
  items: Waiting[];
  /** Calls of this queue sent and not yet answered. */
  inFlight: number;
}

export interface CoalescingOptions {
  /** A request waits for these folds (reducers on an append): ahead of the tenant's lane work (FairCallQueue). */
  urgent?: boolean;
  /**
   * Calls of one (tenant, assembly, class) sent at once; folds asked for while that many are in
   * flight wait and go together in the next call when one returns (group commit for folds). 0: no hold.
   */
  callsInFlight?: number;
  /** Groups in one call at most (a call's deadline covers all of them). */
  maxGroupsPerCall?: number;
}

/**
 * Folds of different aggregates or keys of one tenant that are asked for in the same tick go to
 * the executor as ONE apply call (a group each): the JSON envelope is paid once. With
 * `callsInFlight`, folds asked for while the tenant's calls are in flight wait for one to return
 * and go together: under load one round trip carries many appends' folds (issue 25 item 4: the
 * per-call cost — the pipe write that wakes the host, the deadline timers, the promises — was
 * paid once per append). The calls of different tenants waiting for the same shared executor go
 * on to share one request (a batch, see Executor). When a call dies (a deadline, a crash) because
 * of its own groups, its groups are retried one by one, so one poison event cannot fail its
 * neighbours; the caller sees that group's own error. (A call that dies because another tenant's
 * call killed the executor is re-run by the executor itself and never fails here.)
 */
export class CoalescingApplier {
  private readonly queues = new Map<string, CallQueue>();
  private readonly due = new Set<CallQueue>();
  private scheduled = false;
  private readonly urgent: boolean;
  private readonly callsInFlight: number;
  private readonly maxGroups: number;

  constructor(
    private readonly runtime: Pick<TenantCode, 'apply'>,
    options: CoalescingOptions = {},
  ) {
    this.urgent = options.urgent ?? false;
    this.callsInFlight = options.callsInFlight ?? 0;
    this.maxGroups = options.maxGroupsPerCall ?? Number.MAX_SAFE_INTEGER;
  }

  apply(tenantId: string, assemblyId: string, className: string, group: ApplyGroup): Promise<ApplyGroupResult> {
    return new Promise((resolve, reject) => {
      const key = `${tenantId}\u0000${assemblyId}\u0000${className}`;
      let q = this.queues.get(key);
      if (!q) this.queues.set(key, (q = { tenantId, assemblyId, className, items: [], inFlight: 0 }));
      q.items.push({ group, resolve, reject });
      this.due.add(q);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // setImmediate, not a microtask: lets every fold asked for in this I/O turn join.
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    const due = [...this.due];
    this.due.clear();
    for (const q of due) this.send(q);
  }

  /** Sends what the queue may send now; the rest waits for one of its calls to return. */
  private send(q: CallQueue): void {
    while (q.items.length > 0 && (this.callsInFlight === 0 || q.inFlight < this.callsInFlight)) {
      const items = q.items.splice(0, this.maxGroups);
      q.inFlight++;
      void this.run(q, items).finally(() => {
        q.inFlight--;
        // What waited for this call goes now: it has waited a round trip already.
        this.due.delete(q);
        this.send(q);
      });
    }
    if (q.items.length === 0 && q.inFlight === 0) this.queues.delete(`${q.tenantId}\u0000${q.assemblyId}\u0000${q.className}`);
  }

  private async run(q: CallQueue, items: Waiting[]): Promise<void> {
    try {
      const results = await this.runtime.apply(
        q.tenantId,
        q.assemblyId,
        q.className,
        items.map((w) => w.group),
        undefined,
        this.urgent,
      );
      results.forEach((r, i) => items[i].resolve(r));
    } catch (e) {
      if (items.length > 1 && e instanceof HostCallError && e.failure !== 'UNAVAILABLE') {
        for (const w of items) await this.run(q, [w]);
        return;
      }
      items.forEach((w) => w.reject(e));
    }
  }
}
