/**
 * What an instance holds of a tenant in memory, dropped once its rows are gone: TenantRemover calls
 * it; TenantTransferModule binds it to ServiceTenantPresence (the key cache, streams, routers, assemblies).
 */
export abstract class TenantPresence {
  /** Before any row goes: cached keys of the tenant (this instance refuses them at once), its open streams closed. */
  abstract stop(tenantId: string): Promise<void>;
  /** After the projection rows went: routers of these versions, assemblies loaded for the tenant. */
  abstract forgetWork(tenantId: string, versionIds: string[]): Promise<void>;
}
