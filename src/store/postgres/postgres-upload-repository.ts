import { Pool } from 'pg';
import { DiscoveredImplementation, UploadRecord, UploadRepository } from '../upload-repository.port';
import { toUploadRecord, UPLOAD_COLUMNS, UploadDbRow } from '../upload-row';

export class PostgresUploadRepository implements UploadRepository {
  constructor(private readonly pool: Pool) {}

  async create(r: Parameters<UploadRepository['create']>[0]): Promise<void> {
    await this.pool.query(
      `INSERT INTO uploads (upload_id, tenant_id, kind, status, sources, meta, created_at) VALUES ($1, $2, $3, 'pending', $4, $5, $6)`,
      [r.uploadId, r.tenantId, r.kind, JSON.stringify(r.sources), JSON.stringify(r.meta), new Date(r.createdAt)],
    );
  }

  async get(tenantId: string, uploadId: string): Promise<UploadRecord | null> {
    const { rows } = await this.pool.query<UploadDbRow>(`SELECT ${UPLOAD_COLUMNS} FROM uploads WHERE tenant_id = $1 AND upload_id = $2`, [
      tenantId,
      uploadId,
    ]);
    return rows[0] ? toUploadRecord(rows[0]) : null;
  }

  async pendingTenants(): Promise<string[]> {
    const { rows } = await this.pool.query<{ tenant_id: string }>(
      `SELECT tenant_id FROM uploads WHERE status = 'pending' GROUP BY tenant_id ORDER BY MIN(created_at), tenant_id`,
    );
    return rows.map((r) => r.tenant_id);
  }

  async oldestPending(tenantId: string): Promise<UploadRecord | null> {
    const { rows } = await this.pool.query<UploadDbRow>(
      `SELECT ${UPLOAD_COLUMNS} FROM uploads WHERE status = 'pending' AND tenant_id = $1 ORDER BY created_at, upload_id LIMIT 1`,
      [tenantId],
    );
    return rows[0] ? toUploadRecord(rows[0]) : null;
  }

  async countPending(tenantId: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(`SELECT COUNT(*) AS n FROM uploads WHERE status = 'pending' AND tenant_id = $1`, [
      tenantId,
    ]);
    return Number(rows[0].n);
  }

  async markCompiled(
    tenantId: string,
    uploadId: string,
    r: { discovered: DiscoveredImplementation[]; assembly: Buffer; assemblySha256: string; at: number },
  ): Promise<void> {
    await this.pool.query(
      `UPDATE uploads SET status = 'compiled', discovered = $1, assembly = $2, assembly_sha256 = $3, compiled_at = $4 WHERE tenant_id = $5 AND upload_id = $6`,
      [JSON.stringify(r.discovered), r.assembly, r.assemblySha256, new Date(r.at), tenantId, uploadId],
    );
  }

  async markFailed(tenantId: string, uploadId: string, r: { compilationError: string; at: number }): Promise<void> {
    await this.pool.query(
      `UPDATE uploads SET status = 'failed', compilation_error = $1, compiled_at = $2 WHERE tenant_id = $3 AND upload_id = $4`,
      [r.compilationError, new Date(r.at), tenantId, uploadId],
    );
  }

  async getAssembly(tenantId: string, uploadId: string): Promise<Buffer | null> {
    const { rows } = await this.pool.query<{ assembly: Buffer }>(
      `SELECT assembly FROM uploads WHERE tenant_id = $1 AND upload_id = $2 AND status = 'compiled'`,
      [tenantId, uploadId],
    );
    return rows[0]?.assembly ?? null;
  }
}
