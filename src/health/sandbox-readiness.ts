import { SandboxStatus } from '../tenant-code/host/sandbox-check';
import { ReadinessCheck } from './readiness';

/**
 * The runtime sandbox as checked at start: its mode and each fence. It never holds readiness back — a
 * service missing a fence in strict mode does not start at all — it says what weak mode runs without.
 */
export function sandboxReadiness(status: SandboxStatus): ReadinessCheck {
  return { name: 'sandbox', check: () => ({ ready: true, detail: { mode: status.mode, fences: { ...status.fences } } }) };
}
