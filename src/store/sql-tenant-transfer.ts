import { DomainError } from '../common/domain-error';
import { SqlRunner } from './sql-runner';
import { TenantTransferStore, TransferColumn, TransferRow, TransferTableShape } from './tenant-transfer.port';

/**
 * A connection of its own for one export or import: the transaction it holds (a read snapshot, or
 * the import's one write transaction) must not be shared with the service's other statements.
 * `?` placeholders, as SqlRunner.
 */
export interface TransferSession {
  all<T>(sql: string, params: unknown[]): Promise<T[]>;
  run(sql: string, params: unknown[]): Promise<void>;
  /** Ends the session; its open transaction, if any, is rolled back. */
  release(): Promise<void>;
  /** Whether an error is a unique or primary key violation. */
  isConflict(e: unknown): boolean;
  /** Whether an error is another constraint or a value of the wrong type: the file's fault, not the store's. */
  isInvalidRow(e: unknown): boolean;
}

export interface TransferSessions {
  /** BEGIN of a read-only snapshot (PostgreSQL REPEATABLE READ; SQLite a read transaction on its own connection). */
  readSnapshot(): Promise<TransferSession>;
  /** BEGIN of the one write transaction of an import. */
  writeTransaction(): Promise<TransferSession>;
}

/** Keyset page size of an export, and the most rows one INSERT of an import carries. */
const PAGE_ROWS = 1_000;
const INSERT_ROWS = 200;
/** Both engines take more, this keeps one statement's parameters modest. */
const MAX_PARAMS = 10_000;

const quote = (id: string): string => {
  // Names come from the schema (tables, columns), never from a file: a last check all the same.
  if (!/^[a-z_][a-z0-9_]*$/.test(id)) throw new Error(`not a plain SQL identifier: ${id}`);
  return `"${id}"`;
};

/** Store-neutral value of a column: epoch ms for a time, base64 for bytes. */
function neutral(v: unknown): unknown {
  if (v instanceof Date) return v.getTime();
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
  return v;
}

/** The value to bind for a column of this store. */
function bindable(v: unknown, kind: TransferColumn['kind']): unknown {
  if (v === null || v === undefined) return null;
  if (kind === 'time' && typeof v === 'number') return new Date(v);
  if (kind === 'bytes' && typeof v === 'string') return Buffer.from(v, 'base64');
  if (typeof v === 'object') throw new DomainError('IMPORT_INVALID', 'a column value is an object or array: export values are scalars');
  return v;
}

/** One implementation over both adapters: what differs is schema discovery and how a session is opened. */
export class SqlTenantTransfer implements TenantTransferStore {
  constructor(
    private readonly db: SqlRunner,
    private readonly sessions: TransferSessions,
  ) {}

  async schemaVersion(): Promise<number> {
    const [r] = await this.db.all<{ v: number | null }>('SELECT MAX(version) AS v FROM schema_migrations', []);
    return Number(r?.v ?? 0);
  }

  async tenantTables(): Promise<TransferTableShape[]> {
    return this.db.dialect === 'postgres' ? this.postgresTables() : this.sqliteTables();
  }

  private async sqliteTables(): Promise<TransferTableShape[]> {
    const tables = await this.db.all<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      [],
    );
    const out: TransferTableShape[] = [];
    for (const { name } of tables) {
      const cols = await this.db.all<{ name: string; type: string; pk: number }>('SELECT name, type, pk FROM pragma_table_info(?)', [name]);
      if (!cols.some((c) => c.name === 'tenant_id')) continue;
      out.push({
        name,
        columns: cols.map((c) => ({ name: c.name, kind: /BLOB/i.test(c.type) ? 'bytes' : 'plain' })),
        primaryKey: cols
          .filter((c) => c.pk > 0)
          .sort((a, b) => a.pk - b.pk)
          .map((c) => c.name),
      });
    }
    return out;
  }

  private async postgresTables(): Promise<TransferTableShape[]> {
    const cols = await this.db.all<{ table_name: string; column_name: string; data_type: string }>(
      `SELECT table_name, column_name, data_type FROM information_schema.columns
       WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`,
      [],
    );
    const keys = await this.db.all<{ table_name: string; column_name: string }>(
      `SELECT tc.table_name, kcu.column_name FROM information_schema.table_constraints tc
       JOIN information_schema.key_column_usage kcu
         ON kcu.constraint_name = tc.constraint_name AND kcu.table_schema = tc.table_schema AND kcu.table_name = tc.table_name
       WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = current_schema() ORDER BY tc.table_name, kcu.ordinal_position`,
      [],
    );
    const byTable = new Map<string, TransferTableShape>();
    for (const c of cols) {
      let t = byTable.get(c.table_name);
      if (!t) byTable.set(c.table_name, (t = { name: c.table_name, columns: [], primaryKey: [] }));
      const kind = c.data_type === 'timestamp with time zone' ? 'time' : c.data_type === 'bytea' ? 'bytes' : 'plain';
      t.columns.push({ name: c.column_name, kind });
    }
    for (const k of keys) byTable.get(k.table_name)?.primaryKey.push(k.column_name);
    return [...byTable.values()].filter((t) => t.columns.some((c) => c.name === 'tenant_id'));
  }

  async *exportRows(tenantId: string, tables: TransferTableShape[]): AsyncGenerator<TransferRow[]> {
    const session = await this.sessions.readSnapshot();
    try {
      for (const t of tables) {
        // Keyset paging on the primary key within the tenant: each page one index range.
        const key = t.primaryKey.filter((c) => c !== 'tenant_id');
        const order = key.map(quote).join(', ');
        let after: unknown[] | null = null;
        for (;;) {
          const where: string = after === null ? 'tenant_id = ?' : `tenant_id = ? AND (${order}) > (${key.map(() => '?').join(', ')})`;
          const sql = `SELECT * FROM ${quote(t.name)} WHERE ${where}${key.length ? ` ORDER BY ${order} LIMIT ${PAGE_ROWS}` : ''}`;
          const rows: Record<string, unknown>[] = await session.all<Record<string, unknown>>(
            sql,
            after === null ? [tenantId] : [tenantId, ...after],
          );
          // Only time and byte columns need converting; the rows of every other table go as read.
          const special = t.columns.filter((c) => c.kind !== 'plain').map((c) => c.name);
          if (special.length) for (const r of rows) for (const c of special) r[c] = neutral(r[c]);
          if (rows.length) yield rows.map((row) => ({ table: t.name, row }));
          if (!key.length || rows.length < PAGE_ROWS) break;
          const last: Record<string, unknown> = rows[rows.length - 1];
          after = key.map((c) => last[c]);
        }
      }
    } finally {
      await session.release();
    }
  }

  async importRows(rows: AsyncIterable<TransferRow>, shapes: Map<string, TransferTableShape>): Promise<void> {
    const session = await this.sessions.writeTransaction();
    // Consecutive rows of one table with the same columns go in one multi-row INSERT.
    let pending: { table: string; columns: string[]; values: unknown[][] } | null = null;
    const flush = async () => {
      if (!pending || pending.values.length === 0) return;
      const shape = shapes.get(pending.table)!;
      const kinds = pending.columns.map((c) => shape.columns.find((x) => x.name === c)!.kind);
      const one = `(${pending.columns.map(() => '?').join(', ')})`;
      const params = pending.values.flatMap((vals) => vals.map((v, i) => bindable(v, kinds[i])));
      await session.run(
        `INSERT INTO ${quote(pending.table)} (${pending.columns.map(quote).join(', ')}) VALUES ${pending.values.map(() => one).join(', ')}`,
        params,
      );
      pending = null;
    };
    try {
      for await (const { table, row } of rows) {
        const columns = Object.keys(row);
        const same =
          pending !== null &&
          pending.table === table &&
          pending.columns.length === columns.length &&
          pending.columns.every((c, i) => c === columns[i]) &&
          pending.values.length < INSERT_ROWS &&
          (pending.values.length + 1) * columns.length <= MAX_PARAMS;
        if (!same) {
          await flush();
          pending = { table, columns, values: [] };
        }
        pending!.values.push(columns.map((c) => row[c]));
      }
      await flush();
      await session.run('COMMIT', []);
    } catch (e) {
      if (session.isConflict(e))
        throw new DomainError('TENANT_EXISTS', 'the store already holds this tenant (or one of its API keys): nothing was imported');
      if (session.isInvalidRow(e))
        throw new DomainError('IMPORT_INVALID', `a row does not fit this store's schema (${(e as Error).message}): nothing was imported`);
      throw e;
    } finally {
      await session.release();
    }
  }

  async deleteChunk(tenantId: string, table: TransferTableShape, chunk: number, orphansOnly = false): Promise<number> {
    const key = table.primaryKey.length ? table.primaryKey : ['tenant_id'];
    const cols = key.map(quote).join(', ');
    const n = Math.max(1, Math.floor(chunk));
    const orphan = orphansOnly ? ' AND NOT EXISTS (SELECT 1 FROM tenants WHERE tenant_id = ?)' : '';
    return this.db.run(
      `DELETE FROM ${quote(table.name)} WHERE tenant_id = ?${orphan} AND (${cols}) IN (SELECT ${cols} FROM ${quote(table.name)} WHERE tenant_id = ? LIMIT ${n})`,
      orphansOnly ? [tenantId, tenantId, tenantId] : [tenantId, tenantId],
    );
  }
}
