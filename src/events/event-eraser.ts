import { AggregateErasure, ErasureResult } from '../store/erasure.port';
import { AppendCommitted } from './append-committed.port';
import { StatefulAppend } from './append-pipeline';

/**
 * DELETE /events/{aggregateId}: the store erases in one transaction (erasure.port.ts); then this
 * instance's cached state of the aggregate is dropped and the tenant's projections are woken for
 * the `$erased` event like for any append (the lane sweep finds it too if this wake-up is lost).
 */
export class EventEraser {
  constructor(
    private readonly erasure: AggregateErasure,
    private readonly stateful: StatefulAppend | null,
    private readonly committed: AppendCommitted | null,
    /** EVENTS_APPENDED: the event streams see the `$erased` event at once too. */
    private readonly live: AppendCommitted | null = null,
  ) {}

  async erase(tenantId: string, aggregateId: string): Promise<ErasureResult> {
    const result = await this.erasure.erase(tenantId, aggregateId);
    this.stateful?.erased?.(tenantId, aggregateId);
    this.committed?.appended(tenantId, result.erasedEvent.position);
    this.live?.appended(tenantId, result.erasedEvent.position);
    return result;
  }
}
