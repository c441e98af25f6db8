import { epochMs, sqlTime } from './sql-dialect';
import { SqlRunner } from './sql-runner';
import { UploadRecord, UploadRepository } from './upload-repository.port';

/** Every column but the assembly's bytes, which only getAssembly reads. */
const UPLOAD_COLUMNS =
  'upload_id, tenant_id, kind, status, sources, meta, discovered, compilation_error, diagnostics, assembly_sha256, created_at, compiled_at';

/** A listing's columns: no sources. */
const LISTED_COLUMNS =
  'upload_id, tenant_id, kind, status, meta, discovered, compilation_error, diagnostics, assembly_sha256, created_at, compiled_at';

interface UploadDbRow {
  upload_id: string;
  tenant_id: string;
  kind: string;
  status: string;
  sources: string;
  meta: string;
  discovered: string | null;
  compilation_error: string | null;
  diagnostics: string | null;
  assembly_sha256: string | null;
  created_at: number | Date;
  compiled_at: number | Date | null;
}

function toUploadRecord(r: UploadDbRow): UploadRecord {
  return {
    uploadId: r.upload_id,
    tenantId: r.tenant_id,
    kind: r.kind as UploadRecord['kind'],
    status: r.status as UploadRecord['status'],
    sources: JSON.parse(r.sources),
    meta: JSON.parse(r.meta),
    discovered: r.discovered === null ? null : JSON.parse(r.discovered),
    compilationError: r.compilation_error,
    diagnostics: r.diagnostics === null ? null : JSON.parse(r.diagnostics),
    assemblySha256: r.assembly_sha256,
    createdAt: epochMs(r.created_at),
    compiledAt: epochMs(r.compiled_at),
  };
}

/** No live compile claim: none, or lapsed (its instance died mid-compile). One parameter: now (epoch ms). */
const CLAIMABLE = '(claim_until IS NULL OR claim_until < ?)';
/** Still pending under this owner's claim. One parameter: the owner. */
const STILL_CLAIMED = "status = 'pending' AND claim_owner = ?";
const claimParams = (claim: string | undefined) => (claim === undefined ? [] : [claim]);
const diagnosticsText = (d: unknown[] | undefined) => (d === undefined ? null : JSON.stringify(d));

/** One implementation for both stores over SqlRunner (time columns and BLOB/BYTEA: see sql-dialect.ts). */
export class SqlUploadRepository implements UploadRepository {
  constructor(private readonly db: SqlRunner) {}

  async create(r: Parameters<UploadRepository['create']>[0]): Promise<void> {
    await this.db.run(
      `INSERT INTO uploads (upload_id, tenant_id, kind, status, sources, meta, created_at) VALUES (?, ?, ?, 'pending', ?, ?, ?)`,
      [r.uploadId, r.tenantId, r.kind, JSON.stringify(r.sources), JSON.stringify(r.meta), sqlTime(r.createdAt)],
    );
  }

  async get(tenantId: string, uploadId: string): Promise<UploadRecord | null> {
    const [row] = await this.db.all<UploadDbRow>(`SELECT ${UPLOAD_COLUMNS} FROM uploads WHERE tenant_id = ? AND upload_id = ?`, [
      tenantId,
      uploadId,
    ]);
    return row ? toUploadRecord(row) : null;
  }

  async list(tenantId: string, kind: UploadRecord['kind'], afterUploadId: string, limit: number): Promise<UploadRecord[]> {
    const rows = await this.db.all<Omit<UploadDbRow, 'sources'>>(
      `SELECT ${LISTED_COLUMNS} FROM uploads WHERE tenant_id = ? AND kind = ? AND upload_id > ? ORDER BY upload_id LIMIT ?`,
      [tenantId, kind, afterUploadId, limit],
    );
    return rows.map((r) => toUploadRecord({ ...r, sources: '[]' }));
  }

  async pendingTenants(now?: number): Promise<string[]> {
    const rows = await this.db.all<{ tenant_id: string }>(
      `SELECT tenant_id FROM uploads WHERE status = 'pending'${now === undefined ? '' : ` AND ${CLAIMABLE}`}
       GROUP BY tenant_id ORDER BY MIN(created_at), tenant_id`,
      now === undefined ? [] : [now],
    );
    return rows.map((r) => r.tenant_id);
  }

  async oldestPending(tenantId: string): Promise<UploadRecord | null> {
    const [row] = await this.db.all<UploadDbRow>(
      `SELECT ${UPLOAD_COLUMNS} FROM uploads WHERE status = 'pending' AND tenant_id = ? ORDER BY created_at, upload_id LIMIT 1`,
      [tenantId],
    );
    return row ? toUploadRecord(row) : null;
  }

  async claimOldest(tenantId: string, owner: string, now: number, until: number): Promise<UploadRecord | null> {
    // Read a candidate, then claim it with the claimability re-checked in the UPDATE itself: on
    // PostgreSQL (READ COMMITTED) a second claimer waits for the first's row lock and re-reads the
    // row, finds the claim live and changes nothing; on SQLite writes are serial. A lost race reads
    // the next candidate; the attempts are bounded by the candidates other claimers can take meanwhile.
    for (let attempt = 0; attempt < 8; attempt++) {
      const [row] = await this.db.all<UploadDbRow>(
        `SELECT ${UPLOAD_COLUMNS} FROM uploads WHERE status = 'pending' AND tenant_id = ? AND ${CLAIMABLE}
         ORDER BY created_at, upload_id LIMIT 1`,
        [tenantId, now],
      );
      if (!row) return null;
      const won = await this.db.run(
        `UPDATE uploads SET claim_owner = ?, claim_until = ? WHERE tenant_id = ? AND upload_id = ? AND status = 'pending' AND ${CLAIMABLE}`,
        [owner, until, tenantId, row.upload_id, now],
      );
      if (won > 0) return toUploadRecord(row);
    }
    return null;
  }

  async releaseClaim(tenantId: string, uploadId: string, owner: string): Promise<void> {
    await this.db.run(
      `UPDATE uploads SET claim_owner = NULL, claim_until = NULL WHERE tenant_id = ? AND upload_id = ? AND status = 'pending' AND claim_owner = ?`,
      [tenantId, uploadId, owner],
    );
  }

  async countPending(tenantId?: string): Promise<number> {
    const [row] = await this.db.all<{ n: number | string }>(
      `SELECT COUNT(*) AS n FROM uploads WHERE status = 'pending'${tenantId === undefined ? '' : ' AND tenant_id = ?'}`,
      tenantId === undefined ? [] : [tenantId],
    );
    return Number(row.n);
  }

  async markCompiled(tenantId: string, uploadId: string, r: Parameters<UploadRepository['markCompiled']>[2]): Promise<boolean> {
    const changed = await this.db.run(
      `UPDATE uploads SET status = 'compiled', discovered = ?, assembly = ?, assembly_sha256 = ?, compiled_at = ?, claim_until = NULL, diagnostics = ?
       WHERE tenant_id = ? AND upload_id = ?${r.claim === undefined ? '' : ` AND ${STILL_CLAIMED}`}`,
      [
        JSON.stringify(r.discovered),
        r.assembly,
        r.assemblySha256,
        sqlTime(r.at),
        diagnosticsText(r.diagnostics),
        tenantId,
        uploadId,
        ...claimParams(r.claim),
      ],
    );
    return changed > 0;
  }

  async markFailed(tenantId: string, uploadId: string, r: Parameters<UploadRepository['markFailed']>[2]): Promise<boolean> {
    const changed = await this.db.run(
      `UPDATE uploads SET status = 'failed', compilation_error = ?, compiled_at = ?, claim_until = NULL, diagnostics = ?
       WHERE tenant_id = ? AND upload_id = ?${r.claim === undefined ? '' : ` AND ${STILL_CLAIMED}`}`,
      [r.compilationError, sqlTime(r.at), diagnosticsText(r.diagnostics), tenantId, uploadId, ...claimParams(r.claim)],
    );
    return changed > 0;
  }

  /** The DLL's bytes exactly as stored (a Buffer from BLOB and BYTEA alike). */
  async getAssembly(tenantId: string, uploadId: string): Promise<Buffer | null> {
    const [row] = await this.db.all<{ assembly: Buffer }>(
      `SELECT assembly FROM uploads WHERE tenant_id = ? AND upload_id = ? AND status = 'compiled'`,
      [tenantId, uploadId],
    );
    return row?.assembly ?? null;
  }
}
