import { notFound } from '../common/domain-error';
import { TenantRepository } from '../store/tenant-repository.port';
import { TenantTransferStore, TransferTableShape } from '../store/tenant-transfer.port';

/** What an instance holds of a tenant in memory, dropped once its rows are gone (tenant-transfer.module.ts binds it). */
export interface TenantPresence {
  /** Before any row goes: cached keys of the tenant, so this instance refuses them at once. */
  forgetKeys(tenantId: string): void;
  /** After the projection rows went: routers of these versions, assemblies loaded for the tenant. */
  forgetWork(tenantId: string, versionIds: string[]): Promise<void>;
}

/** Rows deleted per statement: each chunk is its own short transaction, so a huge tenant blocks no one. */
export const REMOVE_CHUNK_ROWS = 5_000;

/**
 * Removed first, in this order: the keys (requests stop), the head (nothing new is positioned),
 * the projections and their versions (routers and lane runs of every instance find them gone
 * and stop), uploads and bindings; then every other table with a tenant_id column, as the schema
 * lists them (a table added later is covered without a change here); the tenant's row last, so
 * an interrupted removal leaves the tenant listed and DELETE can be asked again.
 */
const FIRST = ['api_keys', 'tenant_heads', 'projections', 'projection_versions', 'uploads', 'bindings'];

export class TenantRemover {
  constructor(
    private readonly store: { transfer: TenantTransferStore; tenants: TenantRepository },
    private readonly presence?: TenantPresence,
    private readonly chunk = REMOVE_CHUNK_ROWS,
  ) {}

  async remove(tenantId: string): Promise<{ rows: number }> {
    if (!(await this.store.tenants.getTenant(tenantId))) throw notFound(`tenant '${tenantId}'`);
    this.presence?.forgetKeys(tenantId);
    const shapes = await this.store.transfer.tenantTables();
    const versionIds: string[] = [];
    const versions = shapes.find((s) => s.name === 'projection_versions');
    if (versions) for await (const r of this.store.transfer.exportRows(tenantId, [versions])) versionIds.push(String(r.row.version_id));

    const rank = (s: TransferTableShape) => (s.name === 'tenants' ? 1e9 : FIRST.includes(s.name) ? FIRST.indexOf(s.name) : 1e6);
    let left = [...shapes].sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name));
    let rows = 0;
    // A table a foreign key still holds (one of a later migration, say) is tried again after the others.
    for (let pass = 0; left.length > 0; pass++) {
      const failed: { table: TransferTableShape; error: unknown }[] = [];
      for (const table of left) {
        try {
          rows += await this.deleteAll(tenantId, table);
        } catch (error) {
          failed.push({ table, error });
        }
      }
      if (failed.length === left.length || pass > shapes.length) throw failed[0].error;
      left = failed.map((f) => f.table);
    }
    this.presence?.forgetKeys(tenantId);
    await this.presence?.forgetWork(tenantId, versionIds);
    return { rows };
  }

  private async deleteAll(tenantId: string, table: TransferTableShape): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.store.transfer.deleteChunk(tenantId, table, this.chunk);
      total += n;
      if (n < this.chunk) return total;
      // Other requests get the event loop (and, on SQLite, the writer) between chunks.
      await new Promise((r) => setImmediate(r));
    }
  }
}
