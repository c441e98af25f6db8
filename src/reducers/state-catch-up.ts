import { Injectable, Logger } from '@nestjs/common';
import { Binding, SnapshotRepository } from '../store/reducer-state.port';
import { BindingLookup } from './aggregate-binder';
import { Rebound } from './rebound.port';
import { AggregateStateKeeper } from './aggregate-state-keeper';

export interface CatchUpProgress {
  bindingId: string;
  status: 'running' | 'done' | 'superseded' | 'failed';
  aggregates: number;
  events: number;
  startedAt: number;
  finishedAt?: number;
}

const PAGE = 200;
const IN_FLIGHT = 16;

/**
 * After a bind, recomputes the snapshots of every aggregate of the type under the new binding,
 * in the background. Until an aggregate is done, its state is computed on demand by a read or an
 * append, so nothing waits for this. A newer bind of the same type supersedes a running one.
 */
@Injectable()
export class StateCatchUp implements Rebound {
  private readonly logger = new Logger('StateCatchUp');
  private readonly progress = new Map<string, CatchUpProgress>();
  private readonly running = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly snapshots: SnapshotRepository,
    private readonly binder: BindingLookup,
    private readonly keeper: AggregateStateKeeper,
  ) {}

  /** A new binding: states the keeper cached under the old one are dropped, then recomputed here. */
  rebound(binding: Binding): void {
    this.keeper.forget(binding.tenantId, binding.aggregateType);
    this.start(binding);
  }

  start(binding: Binding): void {
    if (this.closed) return;
    const key = `${binding.tenantId}\u0000${binding.aggregateType}`;
    const p: CatchUpProgress = { bindingId: binding.bindingId, status: 'running', aggregates: 0, events: 0, startedAt: Date.now() };
    this.progress.set(key, p);
    const run = this.run(binding, p).catch((e) => {
      p.status = 'failed';
      p.finishedAt = Date.now();
      this.logger.error(`catch-up of ${binding.aggregateType} failed: ${e instanceof Error ? e.stack : e}`);
    });
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
  }

  status(tenantId: string, aggregateType: string): CatchUpProgress | undefined {
    return this.progress.get(`${tenantId}\u0000${aggregateType}`);
  }

  /** Resolves when every running catch-up has ended (tests, benchmarks, shutdown). */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.all([...this.running]);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.idle();
  }

  private async run(b: Binding, p: CatchUpProgress): Promise<void> {
    let after = '';
    for (;;) {
      const current = await this.binder.current(b.tenantId, b.aggregateType);
      if (this.closed || current?.bindingId !== b.bindingId) {
        p.status = this.closed ? p.status : 'superseded';
        p.finishedAt = Date.now();
        return;
      }
      const page = await this.snapshots.listAggregates(b.tenantId, b.aggregateType, after, PAGE);
      if (page.length === 0) break;
      after = page[page.length - 1].aggregateId;
      // A few aggregates in flight so the executor always has the next call queued.
      for (let i = 0; i < page.length; i += IN_FLIGHT) {
        await Promise.all(
          page.slice(i, i + IN_FLIGHT).map(async (a) => {
            const snap = await this.keeper.recompute(b.tenantId, a.aggregateId, b.aggregateType, b);
            await this.snapshots.putIfNewer(b.tenantId, snap);
            p.aggregates++;
            p.events += snap.version;
          }),
        );
      }
    }
    p.status = 'done';
    p.finishedAt = Date.now();
  }
}
