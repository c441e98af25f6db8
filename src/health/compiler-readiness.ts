import { TenantCodeReadiness } from '../tenant-code/tenant-code-readiness.port';
import { ReadinessCheck } from './readiness';

/**
 * Uploads compile on the shared compiler processes: ready while at least one runs (the others may
 * be restarting after a crash or a killed compile, which the queue waits for anyway). At start the
 * executors' warm-up compiles on one, so this holds no longer than the runtime check does.
 */
export function compilerReadiness(pool: TenantCodeReadiness): ReadinessCheck {
  return {
    name: 'compiler',
    check: async () => {
      const { running, of } = await pool.compilersRunning();
      return { ready: running > 0, detail: { running, of } };
    },
  };
}
