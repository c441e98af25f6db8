import { Isolation } from '../config/isolation-settings';

/** Whether the executors were started at service start (`executors`: how many shared ones). */
export interface ExecutorsState {
  state: 'not-started' | 'starting' | 'started' | 'failed';
  error?: string;
  executors: number;
}

/**
 * What readiness asks of the tenant-code hosts: the executors started at service start, the
 * compiler processes running. One adapter, RuntimePool (TenantCodeModule binds it). Callers:
 * runtimeReadiness and compilerReadiness (health/).
 */
export abstract class TenantCodeReadiness {
  abstract get isolation(): Isolation;
  abstract get executorsState(): ExecutorsState;
  /** Compiler processes running now, of how many (a dead idle one is restarted). */
  abstract compilersRunning(): Promise<{ running: number; of: number }>;
}
