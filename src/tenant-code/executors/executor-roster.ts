import { Isolation } from '../../config/isolation-settings';
import { Executor } from './executor';
import { QuarantineBook, QuarantineOptions, rendezvousSlot } from './tenant-placement';

/** Where a tenant's calls go now (tests and operators). */
export type Placement = { kind: 'shared'; slot: number } | { kind: 'quarantine'; until: number } | { kind: 'tenant' };

export interface ExecutorRosterOptions {
  isolation: Isolation;
  /** shared: the executors (fixed); tenant: executors alive at once; shared: quarantine executors at once. */
  execHosts: number;
  /** Given to the shared executors (see RuntimePoolOptions.stallMs). */
  stallMs: number;
  quarantine: QuarantineOptions;
}

/** Makes an executor (RuntimePool: its spawn, assembly source and limits; itself as the listener). */
export type ExecutorFactory = (label: string, how?: { lowPriority?: boolean; stallMs?: number }) => Executor;

/**
 * Which executor each tenant's calls go to: the shared executors (a tenant by the rendezvous hash of
 * its id), the quarantined tenants' own (shared isolation), or each tenant's own (tenant isolation),
 * and the tenants with calls pending, which change executor only once drained, or when blamed.
 * RuntimePool sends the calls; this only places them.
 */
export class ExecutorRoster {
  readonly shared: Executor[] = [];
  readonly quarantine: QuarantineBook;
  /** tenant isolation: each tenant's executor; shared isolation: the quarantined tenants' executors. */
  private readonly own = new Map<string, Executor>();
  /** Tenants with calls pending, and the executor those went to (a tenant changes executor only once drained, or when blamed). */
  private readonly active = new Map<string, { executor: Executor; pending: number }>();

  constructor(
    private readonly options: ExecutorRosterOptions,
    private readonly create: ExecutorFactory,
  ) {
    this.quarantine = new QuarantineBook(options.quarantine);
    if (options.isolation === 'shared') {
      for (let i = 0; i < Math.max(1, options.execHosts); i++)
        this.shared.push(create(`executor[shared-${i}]`, { stallMs: options.stallMs }));
    }
  }

  /** A call of the tenant is sent: the executor it goes to (the tenant's calls there are counted until settled). */
  enter(tenantId: string): Executor {
    const executor = this.route(tenantId);
    let act = this.active.get(tenantId);
    if (!act) this.active.set(tenantId, (act = { executor, pending: 0 }));
    act.executor = executor;
    act.pending++;
    return executor;
  }

  settled(tenantId: string): void {
    const act = this.active.get(tenantId);
    if (act && --act.pending <= 0) this.active.delete(tenantId);
  }

  /** The tenant's pending calls were moved to `target` (into quarantine). */
  moved(tenantId: string, target: Executor): void {
    const act = this.active.get(tenantId);
    if (act) act.executor = target;
  }

  quarantined(tenantId: string): boolean {
    return this.quarantine.quarantinedUntil(tenantId) !== undefined;
  }

  /**
   * The executor for a tenant's next call. A tenant leaving quarantine goes back only once its
   * calls there are answered, so that its calls keep their order; one entering quarantine goes at
   * once (its calls are moved by RuntimePool.interrupted).
   */
  route(tenantId: string): Executor {
    const want = this.wanted(tenantId);
    const act = this.active.get(tenantId);
    if (act && act.pending > 0 && act.executor !== want && !this.isQuarantineExecutor(want)) return act.executor;
    return want;
  }

  /** Where the tenant's calls go now. */
  placement(tenantId: string): Placement {
    if (this.options.isolation === 'tenant') return { kind: 'tenant' };
    const until = this.quarantine.quarantinedUntil(tenantId);
    const act = this.active.get(tenantId);
    if (until !== undefined || (act && this.isQuarantineExecutor(act.executor))) return { kind: 'quarantine', until: until ?? Date.now() };
    return { kind: 'shared', slot: this.slotOf(tenantId) };
  }

  /** Where a call would go now, without starting anything. */
  current(tenantId: string): Executor | undefined {
    const act = this.active.get(tenantId);
    if (act) return act.executor;
    if (this.options.isolation === 'tenant') return this.own.get(tenantId);
    if (this.quarantined(tenantId)) return this.own.get(tenantId);
    return this.shared[this.slotOf(tenantId)];
  }

  kind(ex: Executor): 'shared' | 'tenant' | 'quarantine' {
    return this.shared.includes(ex) ? 'shared' : this.options.isolation === 'tenant' ? 'tenant' : 'quarantine';
  }

  /** Tenants whose own executor is a quarantine one (stats). */
  quarantinedCount(): number {
    return [...this.own.keys()].filter((t) => this.quarantined(t)).length;
  }

  all(): Executor[] {
    return [...this.shared, ...new Set(this.own.values())];
  }

  /** Every executor, the own ones forgotten (close). */
  release(): Executor[] {
    const executors = this.all();
    this.own.clear();
    return executors;
  }

  /** Own executors no longer needed (tenant isolation: idle since `cutoff`; shared: the quarantine is over), forgotten: to close. */
  sweep(cutoff: number): Executor[] {
    const before = new Set(this.own.values());
    for (const [tenantId, ex] of this.own) {
      const over = this.options.isolation === 'tenant' ? ex.lastUsed < cutoff : !this.quarantined(tenantId);
      if (over && ex.idle && !this.active.has(tenantId)) this.own.delete(tenantId);
    }
    const kept = new Set(this.own.values());
    return [...before].filter((ex) => !kept.has(ex));
  }

  private wanted(tenantId: string): Executor {
    if (this.options.isolation === 'tenant') return this.tenantExecutor(tenantId);
    if (this.quarantined(tenantId)) return this.quarantineExecutor(tenantId);
    return this.shared[this.slotOf(tenantId)];
  }

  private slotOf(tenantId: string): number {
    return rendezvousSlot(tenantId, this.shared.length);
  }

  private tenantExecutor(tenantId: string): Executor {
    let ex = this.own.get(tenantId);
    if (ex) return ex;
    if (this.own.size >= this.options.execHosts) {
      // Make room: the least recently used executor with nothing to do.
      const idle = [...this.own].filter(([t, e]) => e.idle && !this.active.has(t)).sort((a, b) => a[1].lastUsed - b[1].lastUsed)[0];
      if (idle) {
        this.own.delete(idle[0]);
        void idle[1].close();
      }
    }
    ex = this.create(`executor[tenant:${tenantId.slice(0, 8)}]`);
    this.own.set(tenantId, ex);
    return ex;
  }

  /**
   * A quarantined tenant's own executor. Past `execHosts` quarantined tenants at once, newcomers
   * share the existing quarantine executors (offenders among themselves, never with the others).
   */
  private quarantineExecutor(tenantId: string): Executor {
    let ex = this.own.get(tenantId);
    if (ex) return ex;
    const existing = [...new Set(this.own.values())];
    ex =
      existing.length >= Math.max(1, this.options.execHosts)
        ? existing[rendezvousSlot(tenantId, existing.length)]
        : this.create(`executor[quarantine:${tenantId.slice(0, 8)}]`, { lowPriority: true });
    this.own.set(tenantId, ex);
    return ex;
  }

  private isQuarantineExecutor(ex: Executor): boolean {
    return this.options.isolation === 'shared' && !this.shared.includes(ex);
  }
}
