import type Database from 'better-sqlite3';
import { DiscoveredImplementation, UploadRecord, UploadRepository } from '../upload-repository.port';
import { toUploadRecord, UPLOAD_COLUMNS, UploadDbRow } from '../upload-row';

export class SqliteUploadRepository implements UploadRepository {
  constructor(private readonly db: Database.Database) {}

  async create(r: Parameters<UploadRepository['create']>[0]): Promise<void> {
    this.db
      .prepare(`INSERT INTO uploads (upload_id, tenant_id, kind, status, sources, meta, created_at) VALUES (?, ?, ?, 'pending', ?, ?, ?)`)
      .run(r.uploadId, r.tenantId, r.kind, JSON.stringify(r.sources), JSON.stringify(r.meta), r.createdAt);
  }

  async get(tenantId: string, uploadId: string): Promise<UploadRecord | null> {
    const row = this.db.prepare(`SELECT ${UPLOAD_COLUMNS} FROM uploads WHERE tenant_id = ? AND upload_id = ?`).get(tenantId, uploadId) as
      UploadDbRow | undefined;
    return row ? toUploadRecord(row) : null;
  }

  async pendingTenants(): Promise<string[]> {
    const rows = this.db
      .prepare(`SELECT tenant_id FROM uploads WHERE status = 'pending' GROUP BY tenant_id ORDER BY MIN(created_at), tenant_id`)
      .all() as { tenant_id: string }[];
    return rows.map((r) => r.tenant_id);
  }

  async oldestPending(tenantId: string): Promise<UploadRecord | null> {
    const row = this.db
      .prepare(`SELECT ${UPLOAD_COLUMNS} FROM uploads WHERE status = 'pending' AND tenant_id = ? ORDER BY created_at, upload_id LIMIT 1`)
      .get(tenantId) as UploadDbRow | undefined;
    return row ? toUploadRecord(row) : null;
  }

  async countPending(tenantId: string): Promise<number> {
    const row = this.db.prepare(`SELECT COUNT(*) AS n FROM uploads WHERE status = 'pending' AND tenant_id = ?`).get(tenantId) as {
      n: number;
    };
    return row.n;
  }

  async markCompiled(
    tenantId: string,
    uploadId: string,
    r: { discovered: DiscoveredImplementation[]; assembly: Buffer; assemblySha256: string; at: number },
  ): Promise<void> {
    this.db
      .prepare(
        `UPDATE uploads SET status = 'compiled', discovered = ?, assembly = ?, assembly_sha256 = ?, compiled_at = ? WHERE tenant_id = ? AND upload_id = ?`,
      )
      .run(JSON.stringify(r.discovered), r.assembly, r.assemblySha256, r.at, tenantId, uploadId);
  }

  async markFailed(tenantId: string, uploadId: string, r: { compilationError: string; at: number }): Promise<void> {
    this.db
      .prepare(`UPDATE uploads SET status = 'failed', compilation_error = ?, compiled_at = ? WHERE tenant_id = ? AND upload_id = ?`)
      .run(r.compilationError, r.at, tenantId, uploadId);
  }

  async getAssembly(tenantId: string, uploadId: string): Promise<Buffer | null> {
    const row = this.db
      .prepare(`SELECT assembly FROM uploads WHERE tenant_id = ? AND upload_id = ? AND status = 'compiled'`)
      .get(tenantId, uploadId) as { assembly: Buffer } | undefined;
    return row?.assembly ?? null;
  }
}
