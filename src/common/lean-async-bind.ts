import { AsyncResource } from 'node:async_hooks';

const original = AsyncResource.prototype.bind;
let installed = false;

/**
 * `AsyncResource#bind` without the deprecated `asyncResource` property (DEP0172) that Node 20 puts
 * on every bound function: two `deprecate()` wrappers and a defineProperties per call. Fastify 5
 * binds a callback this way for every request with a body (ContentTypeParser.run), where the
 * profile of the append path showed it at ~5 % of the main thread's CPU. The bound function runs
 * in the resource's async scope exactly as before (AsyncLocalStorage, tracing); only the
 * deprecated property is gone, which nothing in this service or its dependencies reads.
 */
export function installLeanAsyncBind(): void {
  if (installed) return;
  installed = true;
  AsyncResource.prototype.bind = function leanBind<F extends (...args: any[]) => any>(this: AsyncResource, fn: F, thisArg?: unknown): F {
    // Anything unusual (not a function: Node's own error) takes Node's path.
    if (typeof fn !== 'function') return (original as (fn: unknown, thisArg?: unknown) => F).call(this, fn, thisArg);
    const bound = leanBound(this, fn, thisArg);
    Object.defineProperty(bound, 'length', { configurable: true, enumerable: false, value: fn.length, writable: false });
    return bound as F;
  } as typeof original;
}

/** The bound function: `fn` in the resource's scope, `this` the caller's unless `thisArg` was given. */
function leanBound(resource: AsyncResource, fn: (...args: any[]) => any, thisArg: unknown) {
  return function (this: unknown, ...args: unknown[]) {
    return resource.runInAsyncScope(fn, thisArg === undefined ? this : thisArg, ...args);
  };
}
