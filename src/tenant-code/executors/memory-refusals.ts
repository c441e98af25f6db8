import { HostCallError } from '../host/host-process';

/**
 * Uploads an executor refused for their tenant's memory (TENANT_MEMORY_EXCEEDED), remembered while
 * their tenant is quarantined for it: their calls get the same error at once instead of loading
 * the upload again — whose type initialisers would allocate past the cap again, in the quarantine
 * executor, which on a busy machine gets only idle CPU and would time the load out. A redeploy or
 * a delete forgets it; so does the end of the quarantine (the upload is then tried again, once, in
 * its shared executor, where it is refused in a few hundred ms if it still does not fit).
 */
export class MemoryRefusals {
  private readonly refused = new Map<string, HostCallError>();

  remember(tenantId: string, assemblyId: string, error: HostCallError): void {
    this.refused.set(keyOf(tenantId, assemblyId), error);
  }

  /** The error to answer at once, while `quarantined` (the tenant's quarantine is not over). */
  refusal(tenantId: string, assemblyId: string, quarantined: boolean): HostCallError | undefined {
    const key = keyOf(tenantId, assemblyId);
    const error = this.refused.get(key);
    if (error && !quarantined) this.refused.delete(key);
    return quarantined ? error : undefined;
  }

  forget(tenantId: string, assemblyId: string): void {
    this.refused.delete(keyOf(tenantId, assemblyId));
  }

  /** Drops what belongs to tenants no longer quarantined (the pool's sweep). */
  prune(quarantined: (tenantId: string) => boolean): void {
    for (const key of this.refused.keys()) if (!quarantined(key.slice(0, key.indexOf('\u0000')))) this.refused.delete(key);
  }
}

const keyOf = (tenantId: string, assemblyId: string) => `${tenantId}\u0000${assemblyId}`;
