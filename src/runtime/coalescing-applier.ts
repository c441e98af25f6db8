import { HostCallError } from './host-process';
import { RuntimePool } from './runtime-pool';
import { ApplyGroupPayload, ApplyGroupResult } from './runtime-protocol';

export type ApplyGroup = ApplyGroupPayload;

interface Waiting {
  group: ApplyGroup;
  resolve: (r: ApplyGroupResult) => void;
  reject: (e: unknown) => void;
}

/**
 * Folds of different aggregates or keys of one tenant that are asked for in the same tick go to
 * the executor as ONE apply call (a group each): the JSON envelope is paid once. The calls of
 * different tenants waiting for the same shared executor go on to share one request (a batch,
 * see Executor). When a call dies (a deadline, a crash) because of its own groups, its groups are
 * retried one by one, so one poison event cannot fail its neighbours; the caller sees that group's
 * own error. (A call that dies because another tenant's call killed the executor is re-run by the
 * executor itself and never fails here.)
 */
export class CoalescingApplier {
  private readonly waiting = new Map<string, { tenantId: string; assemblyId: string; className: string; items: Waiting[] }>();
  private scheduled = false;

  constructor(
    private readonly runtime: Pick<RuntimePool, 'apply'>,
    /** A request waits for these folds (reducers on an append): ahead of the tenant's lane work (FairCallQueue). */
    private readonly urgent = false,
  ) {}

  apply(tenantId: string, assemblyId: string, className: string, group: ApplyGroup): Promise<ApplyGroupResult> {
    return new Promise((resolve, reject) => {
      const key = `${tenantId}\u0000${assemblyId}\u0000${className}`;
      let q = this.waiting.get(key);
      if (!q) this.waiting.set(key, (q = { tenantId, assemblyId, className, items: [] }));
      q.items.push({ group, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const queues = [...this.waiting.values()];
    this.waiting.clear();
    for (const q of queues) void this.run(q.tenantId, q.assemblyId, q.className, q.items);
  }

  private async run(tenantId: string, assemblyId: string, className: string, items: Waiting[]): Promise<void> {
    try {
      const results = await this.runtime.apply(
        tenantId,
        assemblyId,
        className,
        items.map((w) => w.group),
        undefined,
        this.urgent,
      );
      results.forEach((r, i) => items[i].resolve(r));
    } catch (e) {
      if (items.length > 1 && e instanceof HostCallError && e.failure !== 'UNAVAILABLE') {
        for (const w of items) await this.run(tenantId, assemblyId, className, [w]);
        return;
      }
      items.forEach((w) => w.reject(e));
    }
  }
}
