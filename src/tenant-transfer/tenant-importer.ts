import * as fs from 'node:fs';
import * as readline from 'node:readline';
import { DomainError } from '../common/domain-error';
import { TenantRepository } from '../store/tenant-repository.port';
import { TenantTransferStore, TransferRow } from '../store/tenant-transfer.port';
import { atLine, checkTrailer, ExportTrailer, invalid, parseHeader, parseLine } from './export-format';
import { exportedTable, importable, ImportContext } from './transfer-tables';

export interface ImportResult {
  tenantId: string;
  rows: number;
  counts: Record<string, number>;
  /** Projections whose webhook starts suspended (reason `imported`): resume each when its receiver is ready. */
  suspendedWebhooks: string[];
  /** Webhook secrets are not transferred: said in every answer, so that nobody expects the old ones. */
  webhookSecrets: 'regenerated';
}

/**
 * Recreates a tenant from an export file in ONE store transaction: every row, or (a bad line, a
 * missing trailer, a count that differs, a tenant already here) none. The file is read twice at
 * most once: lines are checked as they are inserted, and the trailer is checked before COMMIT.
 */
export class TenantImporter {
  constructor(
    private readonly store: { transfer: TenantTransferStore; tenants: TenantRepository },
    /** After the commit: the imported projection versions (an instance that saw them dropped before tracks them again). */
    private readonly imported: (tenantId: string, versionIds: string[]) => void = () => undefined,
  ) {}

  async importFile(file: string): Promise<ImportResult> {
    const input = fs.createReadStream(file, { encoding: 'utf8' });
    const rl = readline.createInterface({ input, crlfDelay: Infinity });
    try {
      return await this.importLines(rl[Symbol.asyncIterator]());
    } finally {
      rl.close();
      input.destroy();
    }
  }

  async importLines(lines: AsyncIterator<string>): Promise<ImportResult> {
    const { transfer, tenants } = this.store;
    const shapes = new Map((await transfer.tenantTables()).map((s) => [s.name, s]));
    const first = await lines.next();
    const header = parseHeader(first.done ? undefined : first.value, await transfer.schemaVersion());
    const tenantId = header.tenantId;
    if (await tenants.getTenant(tenantId))
      throw new DomainError('TENANT_EXISTS', `the store already holds tenant '${tenantId}': delete it first, or import elsewhere`, {
        tenantId,
      });
    const counts = new Map<string, number>();
    const suspendedWebhooks: string[] = [];
    const versionIds: string[] = [];
    let total = 0;
    let trailer: ExportTrailer | undefined;
    const ctx: ImportContext = { headPosition: 0 };

    async function* rows(): AsyncGenerator<TransferRow> {
      for (let n = 2; ; n++) {
        const next = await lines.next();
        if (next.done) break;
        if (next.value.trim() === '') continue;
        if (trailer) throw invalid(n, 'a line after the trailer');
        const line = parseLine(next.value, n);
        if (line.kind === 'trailer') {
          trailer = line.trailer;
          continue;
        }
        const { table, row } = line;
        if (!importable(table, shapes)) throw invalid(n, `table '${table}' is not one an import writes on this store`);
        const shape = shapes.get(table)!;
        for (const c of Object.keys(row))
          if (!shape.columns.some((x) => x.name === c)) throw invalid(n, `column '${c}' of '${table}' is not in this store's schema`);
        if (row.tenant_id !== tenantId) throw invalid(n, `a row of another tenant than the header's '${tenantId}'`);
        counts.set(table, (counts.get(table) ?? 0) + 1);
        total++;
        if (table === 'tenant_heads') ctx.headPosition = Number(row.position ?? 0);
        if (table === 'projection_versions') versionIds.push(String(row.version_id));
        const spec = exportedTable(table);
        yield { table, row: spec?.onImport ? atLine(n, () => spec.onImport!(row, ctx)) : row };
        for (const extra of atLine(n, () => spec?.alongside?.(row) ?? [])) {
          if (extra.table === 'webhook_suspensions') suspendedWebhooks.push(String(row.projection_id));
          yield extra;
        }
      }
      checkTrailer(trailer, counts, total);
      // Without its head row a tenant could not append on PostgreSQL (the append locks it): both are required.
      for (const table of ['tenants', 'tenant_heads'])
        if (counts.get(table) !== 1) throw new DomainError('IMPORT_INVALID', `the file must hold one ${table} row`, { line: 1 });
    }

    await transfer.importRows(rows(), shapes);
    this.imported(tenantId, versionIds);
    return { tenantId, rows: total, counts: Object.fromEntries(counts), suspendedWebhooks, webhookSecrets: 'regenerated' };
  }
}
