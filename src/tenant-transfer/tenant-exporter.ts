import { notFound } from '../common/domain-error';
import { TenantTransferStore } from '../store/tenant-transfer.port';
import { TenantRepository } from '../store/tenant-repository.port';
import { EXPORT_FORMAT, EXPORT_VERSION, ExportHeader, ExportTrailer } from './export-format';
import { exportPlan } from './transfer-tables';

/** Lines are handed on in chunks of about this many bytes (one write per chunk, not per row). */
const CHUNK_CHARS = 64 * 1024;

/**
 * A tenant's export (export-format.ts): everything not derived, read from one snapshot of the
 * store. Rows are written as the store gives them: data and metadata are text, so JSON.stringify
 * quotes them and the import's JSON.parse gives back the same string, byte for byte.
 */
export class TenantExporter {
  constructor(
    private readonly store: { transfer: TenantTransferStore; tenants: TenantRepository; kind: 'sqlite' | 'postgres' },
    private readonly warn: (message: string) => void = () => undefined,
  ) {}

  /** The export's text, chunk by chunk; NOT_FOUND (before any line) for an unknown tenant. */
  async open(tenantId: string): Promise<AsyncGenerator<string>> {
    if (!(await this.store.tenants.getTenant(tenantId))) throw notFound(`tenant '${tenantId}'`);
    const { tables, unclassified } = exportPlan(await this.store.transfer.tenantTables());
    if (unclassified.length)
      this.warn(`export: tables in neither list of transfer-tables.ts are exported as they are: ${unclassified.join(', ')}`);
    const header: ExportHeader = {
      format: EXPORT_FORMAT,
      version: EXPORT_VERSION,
      tenantId,
      exportedAt: new Date().toISOString(),
      schemaVersion: await this.store.transfer.schemaVersion(),
      store: this.store.kind,
    };
    const rows = this.store.transfer.exportRows(tenantId, tables);
    return (async function* () {
      const counts: Record<string, number> = {};
      let total = 0;
      let chunk = JSON.stringify(header) + '\n';
      for await (const page of rows) {
        for (const r of page) {
          counts[r.table] = (counts[r.table] ?? 0) + 1;
          total++;
          chunk += JSON.stringify(r) + '\n';
          if (chunk.length >= CHUNK_CHARS) {
            yield chunk;
            chunk = '';
          }
        }
      }
      const trailer: ExportTrailer = { end: true, rows: total, counts };
      yield chunk + JSON.stringify(trailer) + '\n';
    })();
  }
}
