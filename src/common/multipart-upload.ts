import type { FastifyRequest } from 'fastify';
import { DomainError } from './domain-error';

export interface MultipartUpload {
  file?: Buffer;
  fields: Record<string, string>;
}

/**
 * Reads a multipart/form-data request: the named file part into memory (size capped by the
 * multipart plugin's limits), the other parts as text fields. Other file parts are drained and ignored.
 */
export async function readMultipart(req: FastifyRequest, fileField = 'file'): Promise<MultipartUpload> {
  if (!req.isMultipart()) throw new DomainError('UNSUPPORTED_MEDIA_TYPE', 'this endpoint takes multipart/form-data');
  const out: MultipartUpload = { fields: {} };
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file') {
        if (part.fieldname === fileField && !out.file) out.file = await part.toBuffer();
        else part.file.resume();
      } else {
        out.fields[part.fieldname] = String(part.value ?? '');
      }
    }
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw new DomainError('ARCHIVE_TOO_LARGE', 'the uploaded file is larger than the limit');
    if (code === 'FST_PARTS_LIMIT' || code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT') {
      throw new DomainError('VALIDATION_FAILED', 'too many parts in the multipart body');
    }
    if (e instanceof DomainError) throw e;
    throw new DomainError('VALIDATION_FAILED', `malformed multipart body: ${(e as Error).message}`);
  }
  return out;
}
