import { TenantCodeReadiness } from '../tenant-code/tenant-code-readiness.port';
import { ReadinessCheck } from './readiness';

/**
 * The shared executors, started at service start: not ready until every one of them runs and has
 * answered a request, so that a load balancer sends no append that would wait for a process to
 * start (the cold-start tail of issue 12). In tenant isolation executors start per tenant: ready.
 * If they could not start, readiness stays false with the reason (appends then answer 503
 * RUNTIME_UNAVAILABLE as before; the executors are tried again on each call).
 */
export function runtimeReadiness(pool: TenantCodeReadiness): ReadinessCheck {
  return {
    name: 'runtime',
    check: () => {
      if (pool.isolation !== 'shared') return { ready: true, detail: { isolation: pool.isolation } };
      const s = pool.executorsState;
      return {
        ready: s.state === 'started',
        detail: { isolation: pool.isolation, executors: s.state, count: s.executors, ...(s.error ? { error: s.error } : {}) },
      };
    },
  };
}
