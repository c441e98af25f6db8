/**
 * Compiled assemblies that are no upload: a dry run's candidate, held in this instance's memory for
 * the run only. The executors' assembly source (RuntimePoolFactory) looks here before the store, so
 * the candidate runs on the same apply/resolveKeys paths as the lanes, in its own collectible load
 * context, and `TenantCode.unload` drops it after the run. Ids are the holder's to keep apart from
 * upload ids (a dry run's carry a `dry-run~` prefix and a UUID).
 */
export class TransientAssemblies {
  private readonly images = new Map<string, Buffer>();

  hold(tenantId: string, assemblyId: string, image: Buffer): void {
    this.images.set(keyOf(tenantId, assemblyId), image);
  }

  release(tenantId: string, assemblyId: string): void {
    this.images.delete(keyOf(tenantId, assemblyId));
  }

  get(tenantId: string, assemblyId: string): Buffer | undefined {
    return this.images.get(keyOf(tenantId, assemblyId));
  }

  /** How many are held now (tests: none is left behind). */
  get size(): number {
    return this.images.size;
  }
}

const keyOf = (tenantId: string, assemblyId: string) => `${tenantId}\u0000${assemblyId}`;
