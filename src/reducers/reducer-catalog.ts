import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DomainError, notFound, validationFailed } from '../common/domain-error';
import { REDUCER_ID_PATTERN } from '../common/event-limits';
import { MultipartUpload } from '../common/multipart-upload';
import { readSourceArchive } from '../tenant-code/compiler/archive-reader';
import { CompileQueue } from '../tenant-code/compiler/compile-queue';
import { UploadRecord, UploadRepository } from '../store/upload-repository.port';
import { AggregateBinder } from './aggregate-binder';

/**
 * Reducer uploads: the archive is checked and read in memory, queued for compiling (202 at
 * once), and once compiled every discovered reducer is bound to its aggregate type.
 */
@Injectable()
export class ReducerCatalog {
  constructor(
    private readonly uploads: UploadRepository,
    private readonly queue: CompileQueue,
    private readonly binder: AggregateBinder,
  ) {}

  /** POST /reducers/upload: the form's `file` (zip), optional `reducerId` and `autoBind`; the 202 answer. */
  async acceptUpload(tenantId: string, form: MultipartUpload): Promise<{ reducerId: string; status: 'pending_compilation' }> {
    const u = await this.upload(tenantId, form.file, form.fields.reducerId || undefined, autoBindField(form.fields.autoBind));
    return { reducerId: u.uploadId, status: 'pending_compilation' };
  }

  async upload(tenantId: string, zip: Buffer | undefined, reducerId?: string, autoBind = true): Promise<UploadRecord> {
    if (!zip) throw validationFailed('file', 'a multipart part named "file" holding a zip archive is required');
    if (reducerId !== undefined) {
      if (reducerId.length > 100 || !REDUCER_ID_PATTERN.test(reducerId)) {
        throw validationFailed('reducerId', 'must be 1–100 letters, digits or . _ : @ + = ~ -, starting with a letter or digit');
      }
      if (await this.uploads.get(tenantId, reducerId)) {
        throw new DomainError('ALREADY_EXISTS', `reducer '${reducerId}' exists; upload under a new id and bind it`, { reducerId });
      }
    }
    await this.queue.checkRoom(tenantId);
    const sources = await readSourceArchive(zip);
    return this.queue.submit({
      tenantId,
      kind: 'reducer',
      sources,
      uploadId: reducerId ?? randomUUID(),
      ...(autoBind ? {} : { meta: { autoBind: false } }),
    });
  }

  async status(tenantId: string, reducerId: string): Promise<UploadRecord> {
    const u = await this.uploads.get(tenantId, reducerId);
    if (!u || u.kind !== 'reducer') throw notFound(`reducer '${reducerId}'`);
    return u;
  }

  /** GET /reducers: a page of the tenant's reducer uploads in id order after `after`; `next` when more may follow. */
  async list(tenantId: string, after: string, limit: number): Promise<{ records: UploadRecord[]; next?: string }> {
    const records = await this.uploads.list(tenantId, 'reducer', after, limit);
    return { records, ...(records.length === limit ? { next: records[records.length - 1].uploadId } : {}) };
  }

  /**
   * After a reducer upload compiled (CompileWorker): each reducer it holds is bound to its aggregate
   * type, unless the upload said `autoBind: false` (a scratch copy must not replace the live reducer).
   */
  async autoBind(u: UploadRecord): Promise<void> {
    if (u.kind !== 'reducer' || u.status !== 'compiled' || u.meta?.autoBind === false) return;
    for (const d of u.discovered ?? []) {
      if (d.kind === 'reducer' && d.aggregateType) await this.binder.bind(u.tenantId, d.aggregateType, u.uploadId, d.className);
    }
  }
}

/** The `autoBind` form field: absent or 'true' binds once compiled, 'false' does not. */
function autoBindField(value: string | undefined): boolean {
  if (value === undefined || value === 'true') return true;
  if (value === 'false') return false;
  throw validationFailed('autoBind', "must be 'true' or 'false'");
}
