import { groupBy } from '../../common/group-by';

/** A tenant's waiting calls: those an HTTP request waits for (a reducer on an append) go first. */
interface TenantCalls<T> {
  urgent: T[];
  rest: T[];
}

/**
 * The calls waiting for one executor, served to tenants in turn: each request to the host takes
 * at most one call per tenant per round (round robin, the tenant served last goes to the back), and
 * never more than `perTenantInFlight` calls of one tenant are sent and unanswered at once. So a
 * tenant that floods calls fills at most its share of each request, and another tenant's single
 * call goes out with the next one. A tenant with nothing queued or in flight has no entry.
 *
 * Within a tenant, its `urgent` calls (a request waits for them: the reducer of an append) go
 * before its background ones (lanes applying and resolving keys), each kind in its own order: an
 * append of a tenant with 200 projections does not queue behind the 400 calls its previous
 * append caused. The calls are pure functions of what they carry, so no order between the two
 * kinds matters.
 */
export class FairCallQueue<T extends { tenantId: string; urgent?: boolean }> {
  /** Insertion order is the turn order. */
  private readonly queues = new Map<string, TenantCalls<T>>();
  private readonly inFlight = new Map<string, number>();
  private queued = 0;

  constructor(private readonly perTenantInFlight: number) {}

  get size(): number {
    return this.queued;
  }

  get tenantsWaiting(): number {
    return this.queues.size;
  }

  push(call: T): void {
    const q = this.queueOf(call.tenantId);
    (call.urgent ? q.urgent : q.rest).push(call);
    this.queued++;
  }

  /** Puts calls back in front of their tenants' queues, in the order given (a re-run goes before what came after it). */
  unshift(calls: T[]): void {
    for (const [tenantId, list] of groupBy(calls, (c) => c.tenantId)) {
      const q = this.queueOf(tenantId);
      q.urgent.unshift(...list.filter((c) => c.urgent));
      q.rest.unshift(...list.filter((c) => !c.urgent));
      this.queued += list.length;
    }
  }

  /**
   * Up to `max` calls for one request, one per tenant per round. A tenant whose next call is not
   * `ready` (its assembly still being fetched) or who is at its in-flight cap sits this one out,
   * and its later calls wait behind that one.
   */
  take(max: number, ready: (call: T) => boolean): T[] {
    const out: T[] = [];
    let progress = true;
    while (out.length < max && progress) {
      progress = false;
      for (const [tenantId, q] of [...this.queues]) {
        if (out.length >= max) break;
        const next = q.urgent.length ? q.urgent : q.rest;
        if ((this.inFlight.get(tenantId) ?? 0) >= this.perTenantInFlight || !ready(next[0])) continue;
        out.push(next.shift()!);
        this.queued--;
        this.inFlight.set(tenantId, (this.inFlight.get(tenantId) ?? 0) + 1);
        // Served: to the back of the line (or out of it).
        this.queues.delete(tenantId);
        if (q.urgent.length || q.rest.length) this.queues.set(tenantId, q);
        progress = true;
      }
    }
    return out;
  }

  /** A call taken earlier is answered (or comes back through unshift): its tenant may send another. */
  settled(tenantId: string): void {
    const n = (this.inFlight.get(tenantId) ?? 0) - 1;
    if (n > 0) this.inFlight.set(tenantId, n);
    else this.inFlight.delete(tenantId);
  }

  /** Whether a call of another tenant than this one is queued. */
  hasOtherThan(tenantId: string): boolean {
    return this.queues.size > (this.queues.has(tenantId) ? 1 : 0);
  }

  /** Every queued call of a tenant, urgent ones first, each kind in order (the tenant moves to another executor). */
  removeTenant(tenantId: string): T[] {
    const q = this.queues.get(tenantId);
    this.queues.delete(tenantId);
    const calls = q ? [...q.urgent, ...q.rest] : [];
    this.queued -= calls.length;
    return calls;
  }

  /** Every queued call (the executor cannot start, or closes). */
  drain(): T[] {
    const all = [...this.queues.values()].flatMap((q) => [...q.urgent, ...q.rest]);
    this.queues.clear();
    this.queued = 0;
    return all;
  }

  private queueOf(tenantId: string): TenantCalls<T> {
    let q = this.queues.get(tenantId);
    if (!q) this.queues.set(tenantId, (q = { urgent: [], rest: [] }));
    return q;
  }
}
