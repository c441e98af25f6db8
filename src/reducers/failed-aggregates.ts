import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '../common/domain-error';
import { FailedAggregate, SnapshotRepository } from '../store/reducer-state.port';
import { BindingLookup } from './aggregate-binder';
import { CatchUpProgress, StateCatchUp } from './state-catch-up';

export interface FailedPage {
  aggregates: FailedAggregate[];
  /** The last id of this page when another may follow: the next page's `after`. */
  next?: string;
  /** The bind's catch-up while this instance knows it: `running` means aggregates it has not reached are not listed yet. */
  catchUp?: CatchUpProgress;
}

/**
 * GET /aggregate-types/{type}/failed: the aggregates the bound reducer cannot fold, each held at
 * the event it failed on (its stored history's, or a held append's). The snapshots say so under the
 * current binding: those the catch-up (or a read, or an append) computed — on any instance, as the
 * store holds them. A page is one more row than asked, so `next` appears only when there is more.
 */
@Injectable()
export class FailedAggregates {
  constructor(
    private readonly lookup: BindingLookup,
    private readonly snapshots: SnapshotRepository,
    @Inject(StateCatchUp) private readonly catchUp: Pick<StateCatchUp, 'status'>,
  ) {}

  async page(tenantId: string, aggregateType: string, after: string, limit: number): Promise<FailedPage> {
    const binding = await this.lookup.current(tenantId, aggregateType);
    if (!binding) throw new DomainError('NO_REDUCER_BOUND', `no reducer is bound to aggregate type '${aggregateType}'`, { aggregateType });
    const rows = await this.snapshots.listFailed(tenantId, aggregateType, binding.bindingId, after, limit + 1);
    const aggregates = rows.slice(0, limit);
    const catchUp = this.catchUp.status(tenantId, aggregateType);
    return {
      aggregates,
      ...(rows.length > limit ? { next: aggregates[aggregates.length - 1].aggregateId } : {}),
      ...(catchUp && catchUp.bindingId === binding.bindingId ? { catchUp } : {}),
    };
  }
}
