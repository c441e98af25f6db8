import { UploadRecord } from './upload-repository.port';

/** Column list and row mapping shared by both adapters (the assembly bytes are read apart). */
export const UPLOAD_COLUMNS =
  'upload_id, tenant_id, kind, status, sources, meta, discovered, compilation_error, assembly_sha256, created_at, compiled_at';

export interface UploadDbRow {
  upload_id: string;
  tenant_id: string;
  kind: string;
  status: string;
  sources: string;
  meta: string;
  discovered: string | null;
  compilation_error: string | null;
  assembly_sha256: string | null;
  created_at: number | Date;
  compiled_at: number | Date | null;
}

const ms = (v: number | Date | null): number | null => (v === null ? null : v instanceof Date ? v.getTime() : Number(v));

export function toUploadRecord(r: UploadDbRow): UploadRecord {
  return {
    uploadId: r.upload_id,
    tenantId: r.tenant_id,
    kind: r.kind as UploadRecord['kind'],
    status: r.status as UploadRecord['status'],
    sources: JSON.parse(r.sources),
    meta: JSON.parse(r.meta),
    discovered: r.discovered === null ? null : JSON.parse(r.discovered),
    compilationError: r.compilation_error,
    assemblySha256: r.assembly_sha256,
    createdAt: ms(r.created_at)!,
    compiledAt: ms(r.compiled_at),
  };
}
