import { notFound } from '../common/domain-error';
import { TenantRepository } from '../store/tenant-repository.port';
import { TenantTransferStore, TransferTableShape } from '../store/tenant-transfer.port';
import { TenantPresence } from './tenant-presence.port';

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

export interface TenantRemoverOptions {
  chunk?: number;
  /**
   * A second pass this long after a removal, over rows of no tenant: what was still under way
   * when the rows went (a request on another instance that had the key cached, a compile that
   * finished, a lane run) and wrote after them. The service sets API_KEY_CACHE_MS + 1 s.
   */
  followUpMs?: number;
  warn?: (message: string) => void;
}

export class TenantRemover {
  private readonly followUps = new Set<NodeJS.Timeout>();
  private readonly chunk: number;

  constructor(
    private readonly store: { transfer: TenantTransferStore; tenants: TenantRepository },
    private readonly presence?: TenantPresence,
    private readonly options: TenantRemoverOptions = {},
  ) {
    this.chunk = options.chunk ?? REMOVE_CHUNK_ROWS;
  }

  /** Cancels the follow-up passes not yet run (shutdown). */
  close(): void {
    for (const t of this.followUps) clearTimeout(t);
    this.followUps.clear();
  }

  /** Rows of this tenant id in any table while it has no tenants row; rows deleted. */
  async removeOrphans(tenantId: string): Promise<number> {
    let rows = 0;
    for (const table of await this.store.transfer.tenantTables()) {
      if (table.name === 'tenants') continue;
      for (;;) {
        const n = await this.store.transfer.deleteChunk(tenantId, table, this.chunk, true);
        rows += n;
        if (n < this.chunk) break;
      }
    }
    return rows;
  }

  private scheduleFollowUp(tenantId: string): void {
    const ms = this.options.followUpMs;
    if (!ms) return;
    const timer = setTimeout(() => {
      this.followUps.delete(timer);
      this.removeOrphans(tenantId).then(
        (n) => n > 0 && this.options.warn?.(`tenant ${tenantId} removed: ${n} rows written after the removal were removed too`),
        (e: unknown) => this.options.warn?.(`tenant ${tenantId} removed: the follow-up pass failed: ${e instanceof Error ? e.message : e}`),
      );
    }, ms);
    timer.unref();
    this.followUps.add(timer);
  }

  async remove(tenantId: string): Promise<{ rows: number }> {
    if (!(await this.store.tenants.getTenant(tenantId))) throw notFound(`tenant '${tenantId}'`);
    await this.presence?.stop(tenantId);
    const shapes = await this.store.transfer.tenantTables();
    const versionIds: string[] = [];
    const versions = shapes.find((s) => s.name === 'projection_versions');
    if (versions)
      for await (const page of this.store.transfer.exportRows(tenantId, [versions]))
        for (const r of page) versionIds.push(String(r.row.version_id));

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
    await this.presence?.stop(tenantId);
    await this.presence?.forgetWork(tenantId, versionIds);
    this.scheduleFollowUp(tenantId);
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
