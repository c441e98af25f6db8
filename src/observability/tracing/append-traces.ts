/** One acknowledged append: its positions and the span that appended them. */
interface TracedRange {
  from: number;
  to: number;
  traceParent: string;
}

export interface AppendTracesLimits {
  /** Appends remembered per tenant (the oldest forgotten first). */
  perTenant: number;
  /** Tenants remembered (the least recently appended to forgotten first). */
  tenants: number;
}

const DEFAULT_LIMITS: AppendTracesLimits = { perTenant: 4096, tenants: 1024 };

/**
 * The trace of each recent append by position, so that work done later on those positions (the
 * router's pass, a lane's run, maybe minutes later) continues the append's trace. Kept in memory,
 * bounded: work on positions it no longer holds (a long backlog, a restart, a lane run on another
 * instance) starts no span. Nothing of it is stored; the notification a run writes keeps its own.
 */
export class AppendTraces {
  /** tenant → ranges ascending by position (appends commit nearly in order: inserting is at the end). */
  private readonly tenants = new Map<string, TracedRange[]>();

  constructor(private readonly limits: AppendTracesLimits = DEFAULT_LIMITS) {}

  remember(tenantId: string, from: number, to: number, traceParent: string): void {
    let ranges = this.tenants.get(tenantId);
    if (ranges)
      this.tenants.delete(tenantId); // re-inserted below: most recent last
    else ranges = [];
    this.tenants.set(tenantId, ranges);
    let i = ranges.length;
    while (i > 0 && ranges[i - 1].from > from) i--;
    ranges.splice(i, 0, { from, to, traceParent });
    if (ranges.length > this.limits.perTenant) ranges.splice(0, ranges.length - this.limits.perTenant);
    if (this.tenants.size > this.limits.tenants) this.tenants.delete(this.tenants.keys().next().value!);
  }

  /** The trace of the append that stored `position`, if remembered. */
  at(tenantId: string, position: number): string | undefined {
    const ranges = this.tenants.get(tenantId);
    if (!ranges) return undefined;
    const i = this.lastStartingAtOrBefore(ranges, position);
    return i >= 0 && ranges[i].to >= position ? ranges[i].traceParent : undefined;
  }

  /** The traces of the appends among positions `from`..`to` (inclusive), in position order. */
  between(tenantId: string, from: number, to: number): string[] {
    const ranges = this.tenants.get(tenantId);
    if (!ranges) return [];
    const out: string[] = [];
    for (let i = Math.max(0, this.lastStartingAtOrBefore(ranges, from)); i < ranges.length && ranges[i].from <= to; i++)
      if (ranges[i].to >= from) out.push(ranges[i].traceParent);
    return out;
  }

  /** The traces of the appends that stored these positions (each once), in the order given. */
  of(tenantId: string, positions: readonly number[]): string[] {
    const out = new Set<string>();
    for (const p of positions) {
      const t = this.at(tenantId, p);
      if (t) out.add(t);
    }
    return [...out];
  }

  private lastStartingAtOrBefore(ranges: TracedRange[], position: number): number {
    let lo = 0;
    let hi = ranges.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (ranges[mid].from <= position) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }
}
