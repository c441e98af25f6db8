import { Inject, Injectable } from '@nestjs/common';
import { notFound } from '../common/domain-error';
import { Binding } from '../store/reducer-state.port';
import { BindingLookup } from './aggregate-binder';
import { CatchUpProgress, StateCatchUp } from './state-catch-up';

/** GET /aggregate-types/{type}: the binding in force, with the progress of the catch-up it started. */
@Injectable()
export class BindingStatus {
  constructor(
    private readonly lookup: BindingLookup,
    @Inject(StateCatchUp) private readonly catchUp: Pick<StateCatchUp, 'status'>,
  ) {}

  async read(tenantId: string, aggregateType: string): Promise<{ binding: Binding; catchUp?: CatchUpProgress }> {
    const binding = await this.lookup.current(tenantId, aggregateType);
    if (!binding) throw notFound(`binding of aggregate type '${aggregateType}'`);
    return { binding, catchUp: this.catchUp.status(tenantId, aggregateType) };
  }
}
