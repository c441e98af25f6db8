import { Injectable } from '@nestjs/common';
import { AggregateErasure, ErasureResult } from '../store/erasure.port';
import { AppendCommitted, EventsAppended, EventWebhooksAppended } from './append-committed.port';
import { StatefulAppend } from './stateful-append.port';

/**
 * DELETE /events/{aggregateId}: the store erases in one transaction (erasure.port.ts); then this
 * instance's cached state of the aggregate is dropped and the tenant's projections are woken for
 * the `$erased` event like for any append (the lane sweep finds it too if this wake-up is lost).
 */
@Injectable()
export class EventEraser {
  constructor(
    private readonly erasure: AggregateErasure,
    private readonly stateful: StatefulAppend,
    private readonly committed: AppendCommitted,
    private readonly hooks: EventWebhooksAppended,
    /** The event streams see the `$erased` event at once too. */
    private readonly live: EventsAppended,
  ) {}

  async erase(tenantId: string, aggregateId: string): Promise<ErasureResult> {
    const result = await this.erasure.erase(tenantId, aggregateId);
    this.stateful.erased(tenantId, aggregateId);
    this.committed.appended(tenantId, result.erasedEvent.position);
    this.hooks.appended(tenantId, result.erasedEvent.position);
    this.live.appended(tenantId, result.erasedEvent.position);
    return result;
  }
}
