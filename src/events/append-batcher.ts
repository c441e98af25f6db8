import { DomainError } from '../common/domain-error';
import { AppendRequest, AppendResult, EventLog } from '../store/event-log.port';

interface Pending {
  request: AppendRequest;
  resolve: (r: AppendResult) => void;
  reject: (e: unknown) => void;
}

export interface AppendBatcherOptions {
  /** Upper bound of one transaction, in events; a batch request larger than this still goes alone. */
  maxEventsPerCommit: number;
}

/**
 * Group commit. Appends that arrive while a transaction is in flight wait for it and then go
 * together in the next one, so the store pays one commit (one fsync) per batch, not per append.
 * Each append is still checked and answered on its own. One transaction at a time per process:
 * positions of a tenant are drawn under its counter-row lock anyway, so more would only queue.
 */
export class AppendBatcher {
  private queue: Pending[] = [];
  private flushing = false;
  private closed = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly log: Pick<EventLog, 'appendMany'>,
    private readonly options: AppendBatcherOptions = { maxEventsPerCommit: 5000 },
  ) {}

  append(request: AppendRequest): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new DomainError('SERVICE_UNAVAILABLE', 'the service is shutting down'));
    return new Promise<AppendResult>((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        // setImmediate, not a microtask: lets every request already parsed in this I/O turn join.
        setImmediate(() => void this.flush());
      }
    });
  }

  /** Refuses new appends and resolves once everything accepted so far is committed and answered. */
  async close(): Promise<void> {
    this.closed = true;
    if (!this.flushing && this.queue.length === 0) return;
    await new Promise<void>((r) => this.idleWaiters.push(r));
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.take();
      await this.commit(batch);
    }
    this.flushing = false;
    this.idleWaiters.splice(0).forEach((r) => r());
  }

  private take(): Pending[] {
    let events = 0;
    let n = 0;
    while (n < this.queue.length) {
      const size = this.queue[n].request.events.length;
      if (n > 0 && events + size > this.options.maxEventsPerCommit) break;
      events += size;
      n++;
    }
    return this.queue.splice(0, n);
  }

  private async commit(batch: Pending[]): Promise<void> {
    try {
      const outcomes = await this.log.appendMany(batch.map((p) => p.request));
      outcomes.forEach((o, i) => (o.ok ? batch[i].resolve(o.result) : batch[i].reject(o.error)));
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
