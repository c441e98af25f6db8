import { DomainError } from '../common/domain-error';
import { idempotencyKeyOf, streamKey } from '../store/append-plan';
import { AppMetrics, NO_METRICS } from '../observability/metrics/app-metrics';
import { AppendOutcome, AppendRequest, AppendResult, EventLog } from '../store/event-log.port';
import { activeTraceParent, endWith } from '../observability/tracing/tracing';
import { startCommitSpan } from '../observability/tracing/spans';

/**
 * One append, or one multi-aggregate transaction (its members, contiguous and always in the same
 * commit: the store stores all of them or none).
 */
interface Pending {
  requests: AppendRequest[];
  /** Its aggregates' keys, and its idempotency key's when it has one (see keysOf). */
  keys: string[];
  /** Its events, all members together. */
  size: number;
  settle: (outcomes: AppendOutcome[]) => void;
  reject: (e: unknown) => void;
  /** The appending span (tracing on): the batch's commit span links to it. */
  trace?: string;
}

export interface AppendBatcherOptions {
  /** Upper bound of one transaction, in events; a batch request larger than this still goes alone. */
  maxEventsPerCommit: number;
  /**
   * Transactions in flight at once. 1 for SQLite (one writer). 2 for PostgreSQL: the next batch
   * is already waiting at the tenant's counter row when the previous one commits, so the round
   * trips of one overlap the commit of the other.
   */
  maxConcurrentCommits: number;
}

const DEFAULTS: AppendBatcherOptions = { maxEventsPerCommit: 5000, maxConcurrentCommits: 1 };

/**
 * Group commit. Appends that arrive while transactions are in flight wait and then go together in
 * the next one, so the store pays one commit (one fsync) per batch, not per append. Each append
 * is still checked and answered on its own. Concurrent batches never share an aggregate, so an
 * aggregate's appends commit in arrival order. Tenants take turns within a commit (see take()).
 */
export class AppendBatcher {
  private queue: Pending[] = [];
  private active = 0;
  private readonly busyKeys = new Set<string>();
  private readonly tick = new GroupCommitTick();
  private closed = false;
  private idleWaiters: (() => void)[] = [];
  private readonly options: AppendBatcherOptions;

  constructor(
    private readonly log: Pick<EventLog, 'appendMany'>,
    options: Partial<AppendBatcherOptions> = {},
    private readonly metrics: AppMetrics = NO_METRICS,
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  append(request: AppendRequest): Promise<AppendResult> {
    return this.enqueue([request]).then(([o]) => {
      if (!o.ok) throw o.error;
      return o.result;
    });
  }

  /**
   * A transaction's members (AppendRequest.transaction): taken together into one commit, never
   * split across two, however full the commit (like a batch request larger than the cap, it then
   * goes alone). Resolves with every member's result, or rejects with the transaction's failure.
   */
  appendTransaction(members: AppendRequest[]): Promise<AppendResult[]> {
    return this.enqueue(members).then((outcomes) => {
      const failed = transactionFailure(members, outcomes);
      if (failed) throw failed;
      return outcomes.map((o) => (o as { ok: true; result: AppendResult }).result);
    });
  }

  private enqueue(requests: AppendRequest[]): Promise<AppendOutcome[]> {
    if (this.closed) return Promise.reject(new DomainError('SERVICE_UNAVAILABLE', 'the service is shutting down'));
    return new Promise<AppendOutcome[]>((settle, reject) => {
      const keys = [...new Set(requests.flatMap(keysOf))];
      const size = requests.reduce((n, r) => n + r.events.length, 0);
      this.queue.push({ requests, keys, size, settle, reject, trace: activeTraceParent() });
      this.tick.schedule(this);
    });
  }

  /** The tick's flush: as many transactions as may be in flight, from what waits (GroupCommitTick calls it). */
  flush(): void {
    this.pump();
  }

  /** Refuses new appends and resolves once everything accepted so far is committed and answered. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.isIdle()) return;
    await new Promise<void>((r) => this.idleWaiters.push(r));
  }

  private isIdle(): boolean {
    return this.active === 0 && this.queue.length === 0;
  }

  private pump(): void {
    while (this.active < this.options.maxConcurrentCommits && this.queue.length > 0) {
      const batch = this.take();
      if (batch.length === 0) break; // everything queued waits on an aggregate in flight
      this.active++;
      for (const p of batch) for (const k of p.keys) this.busyKeys.add(k);
      void this.commit(batch).finally(() => {
        this.active--;
        for (const p of batch) for (const k of p.keys) this.busyKeys.delete(k);
        this.pump();
        if (this.isIdle()) this.idleWaiters.splice(0).forEach((r) => r());
      });
    }
  }

  /**
   * The next transaction's appends, tenants in turn: round one takes each waiting tenant's oldest
   * eligible append, round two each one's second, and so on until the commit is full. Tenants go
   * in the order of their oldest waiting append, so one left out of a full commit goes first in
   * the next: a tenant's queued batches delay another tenant's append by at most the commit in
   * flight and at most one more (issue 25 item 5). Within a tenant, arrival order is kept.
   */
  private take(): Pending[] {
    const byTenant = new Map<string, Pending[]>();
    for (const p of this.queue) {
      const own = byTenant.get(p.requests[0].tenantId);
      if (own) own.push(p);
      else byTenant.set(p.requests[0].tenantId, [p]);
    }
    const lanes = [...byTenant.values()].map((items) => ({ items, next: 0 }));
    const taken = new Set<Pending>();
    const batch: Pending[] = [];
    // An aggregate left behind once stays behind for this batch, so its appends keep their order.
    const held = new Set<string>();
    let events = 0;
    let open = lanes.length;
    round: while (open > 0) {
      open = 0;
      for (const lane of lanes) {
        while (lane.next < lane.items.length) {
          const p = lane.items[lane.next++];
          if (p.keys.some((k) => this.busyKeys.has(k) || held.has(k))) {
            for (const k of p.keys) held.add(k);
            continue;
          }
          const size = p.size;
          // Full: nothing smaller skips ahead of what did not fit (it goes first next time).
          if (batch.length > 0 && events + size > this.options.maxEventsPerCommit) break round;
          batch.push(p);
          taken.add(p);
          events += size;
          break;
        }
        if (lane.next < lane.items.length) open++;
      }
    }
    this.queue = taken.size === 0 ? this.queue : this.queue.filter((p) => !taken.has(p));
    return batch;
  }

  private async commit(batch: Pending[]): Promise<void> {
    try {
      const requests = batch.flatMap((p) => p.requests);
      const outcomes = await endWith(startCommitSpan(batch), this.log.appendMany(requests));
      if (this.metrics.enabled) this.metrics.groupCommitted(requests.length, ...storedCounts(requests, outcomes));
      let at = 0;
      for (const p of batch) {
        p.settle(outcomes.slice(at, at + p.requests.length));
        at += p.requests.length;
      }
    } catch (e) {
      if (batch.length === 1) {
        batch[0].reject(e);
        return;
      }
      // The transaction failed as a whole (nothing was stored): retry one by one so that one
      // bad request, or a passing fault, cannot fail its neighbours.
      for (const p of batch) await this.commit([p]);
    }
  }
}

/**
 * The group-commit tick, a named asynchronous boundary of the append path (ARCHITECTURE.md, "One
 * event, hop by hop"): the first append of a turn schedules one flush of the batcher on the next
 * setImmediate, and every append until then joins it. setImmediate, not a microtask: lets every
 * request already parsed in this I/O turn join.
 */
export class GroupCommitTick {
  private scheduled = false;

  schedule(batcher: AppendBatcher): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      batcher.flush();
    });
  }
}

/**
 * What a request may not share with a transaction in flight: its aggregate (appends in order), and its
 * idempotency key (two requests with one key, on different aggregates, go one after the other, so
 * the second sees the first's key instead of both racing for it in the store).
 */
function keysOf(r: AppendRequest): string[] {
  const stream = streamKey(r.tenantId, r.aggregateId);
  return r.idempotency ? [stream, `idem\u0000${idempotencyKeyOf(r.tenantId, r.idempotency.key)}`] : [stream];
}

/** The append requests a transaction stored, and their events (refused ones and replays stored nothing). */
function storedCounts(batch: AppendRequest[], outcomes: AppendOutcome[]): [number, number] {
  let requests = 0;
  let events = 0;
  outcomes.forEach((o, i) => {
    if (!o.ok || o.result.replay) return;
    requests++;
    events += batch[i].events.length;
  });
  return [requests, events];
}

/**
 * A transaction's failure, or undefined when every member was stored (or replayed). The store answers
 * every member with the failure that refused the transaction; the failing member's own outcome is the
 * one whose error names its aggregate, which the answer names too (`aggregateId`, e.g. beside
 * VERSION_CONFLICT's versions).
 */
export function transactionFailure(members: AppendRequest[], outcomes: AppendOutcome[]): DomainError | undefined {
  const failed = outcomes.findIndex((o) => !o.ok);
  if (failed < 0) return undefined;
  const error = (outcomes[failed] as { ok: false; error: DomainError }).error;
  if (error.details.aggregateId !== undefined || members.length === 1) return error;
  // SEAM(i28-store): which member failed, if the store's error does not say; the first failing outcome's otherwise.
  return new DomainError(error.code, error.message, { ...error.details, aggregateId: members[failed].aggregateId });
}
