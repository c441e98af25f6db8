/**
 * Moving a whole tenant between stores (src/tenant-transfer): its rows read and written table by
 * table, generically, so that a table or column added by a later migration travels without code
 * here. Values are store-neutral: time columns as epoch milliseconds, byte columns as base64.
 */

/** A column of the store's schema, as discovered at run time (PRAGMA / information_schema). */
export interface TransferColumn {
  name: string;
  /** time: timestamptz on PostgreSQL (epoch ms INTEGER on SQLite is 'plain'); bytes: BLOB / bytea. */
  kind: 'time' | 'bytes' | 'plain';
}

/** A table that holds tenant rows: it has a tenant_id column. */
export interface TransferTableShape {
  name: string;
  columns: TransferColumn[];
  /** Primary key columns, in key order (keyset paging and chunked deletes). */
  primaryKey: string[];
}

/** One exported row: its table and every column, values store-neutral. */
export interface TransferRow {
  table: string;
  row: Record<string, unknown>;
}

/**
 * A whole tenant's rows, table by table (store.transfer). Adapter: SqlTenantTransfer (both stores).
 * Who calls it: tenant-transfer/ (TenantExporter, TenantImporter, TenantRemover).
 */
export abstract class TenantTransferStore {
  /** The number of migrations this store has applied (the export header's schemaVersion). */
  abstract schemaVersion(): Promise<number>;
  /** Every table of the schema with a tenant_id column, with its columns and primary key. */
  abstract tenantTables(): Promise<TransferTableShape[]>;
  /**
   * The tenant's rows of the given tables, in that order, each table in primary key order, all
   * read from ONE snapshot of the store (a consistent export while appends go on), a page (up to
   * 1,000 rows of one table) at a time.
   */
  abstract exportRows(tenantId: string, tables: TransferTableShape[]): AsyncGenerator<TransferRow[]>;
  /**
   * Inserts the rows in ONE transaction: all of them or none. Rejects with TENANT_EXISTS when a
   * row conflicts with one already stored (the tenant, or one of its key hashes). Columns must be
   * the target's (checked by the caller against tenantTables()).
   */
  abstract importRows(rows: AsyncIterable<TransferRow>, shapes: Map<string, TransferTableShape>): Promise<void>;
  /**
   * Deletes up to `chunk` of the tenant's rows of one table, in its own short transaction; rows
   * deleted. `orphansOnly`: only while the store has no tenants row of that id (in the statement
   * itself, so a tenant imported again meanwhile keeps its rows).
   */
  abstract deleteChunk(tenantId: string, table: TransferTableShape, chunk: number, orphansOnly?: boolean): Promise<number>;
}
