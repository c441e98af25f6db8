import { AsyncLocalStorage, AsyncResource, executionAsyncId } from 'node:async_hooks';
import { installLeanAsyncBind } from './lean-async-bind';

describe('installLeanAsyncBind', () => {
  beforeAll(() => installLeanAsyncBind());

  it('runs the bound function in the resource’s async context, with its arguments, this and result', () => {
    const als = new AsyncLocalStorage<string>();
    const resource = als.run('inside', () => new AsyncResource('test'));
    const bound = resource.bind(function (this: unknown, a: number, b: number) {
      return { store: als.getStore(), sum: a + b, self: this, id: executionAsyncId() };
    });
    const out = als.run('outside', () => bound.call('me', 1, 2));
    expect(out).toEqual({ store: 'inside', sum: 3, self: 'me', id: resource.asyncId() });
    expect(bound.length).toBe(2);
    expect('asyncResource' in bound).toBe(false);
  });

  it('binds `this` when given, and the static bind keeps working', () => {
    const als = new AsyncLocalStorage<number>();
    // Node's bind takes a thisArg; @types/node does not declare it.
    const resource: any = als.run(7, () => new AsyncResource('t'));
    const withThis = resource.bind(
      function (this: { x: number }) {
        return [this.x, als.getStore()];
      },
      { x: 5 },
    );
    expect(withThis()).toEqual([5, 7]);
    const staticBound = als.run(9, () => AsyncResource.bind(() => als.getStore()));
    expect(staticBound()).toBe(9);
  });

  it('refuses a non-function as Node does', () => {
    expect(() => new AsyncResource('t').bind(42 as any)).toThrow(/must be of type function/);
  });
});
