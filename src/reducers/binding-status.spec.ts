import { DomainError } from '../common/domain-error';
import { Binding, BindingRepository } from '../store/reducer-state.port';
import { BindingLookup } from './aggregate-binder';
import { BindingStatus } from './binding-status';
import { CatchUpProgress } from './state-catch-up';

const binding: Binding = { tenantId: 't', aggregateType: 'account', reducerId: 'r1', className: 'A.R', bindingId: 'b1', boundAt: 1 };
const progress: CatchUpProgress = { bindingId: 'b1', status: 'running', aggregates: 3, events: 10, startedAt: 1 };

function statusOf(bound: Binding[], catchUps: Record<string, CatchUpProgress> = {}) {
  const bindings = {
    get: async (t: string, type: string) => bound.find((b) => b.tenantId === t && b.aggregateType === type) ?? null,
  } as unknown as BindingRepository;
  return new BindingStatus(new BindingLookup(bindings), { status: (t, type) => catchUps[`${t}/${type}`] });
}

describe('BindingStatus', () => {
  it('reads the binding in force with the progress of the catch-up of its type', async () => {
    const status = statusOf([binding], { 't/account': progress, 't/order': { ...progress, bindingId: 'b9' } });
    await expect(status.read('t', 'account')).resolves.toEqual({ binding, catchUp: progress });
  });

  it('reads a binding without a catch-up under way', async () => {
    await expect(statusOf([binding]).read('t', 'account')).resolves.toEqual({ binding, catchUp: undefined });
  });

  it('answers NOT_FOUND for a type nothing is bound to, also one bound in another tenant', async () => {
    const read = statusOf([binding]).read('other', 'account');
    await expect(read).rejects.toBeInstanceOf(DomainError);
    await expect(read).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringContaining("binding of aggregate type 'account'"),
    });
  });
});
