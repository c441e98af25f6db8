import { randomUUID } from 'node:crypto';
import { boolean, constant, Infer, nullable, object, oneOf, string } from '../common/json-schema';
import { DomainError, notFound, validationFailed } from '../common/domain-error';
import { MultipartUpload } from '../common/multipart-upload';
import { LaneEngine } from '../lanes/lane-engine';
import { readSourceArchive } from '../tenant-code/compiler/archive-reader';
import { CompileQueue } from '../tenant-code/compiler/compile-queue';
import { EventLog } from '../store/event-log.port';
import { ProjectionCatalogRepository, ProjectionRecord } from '../store/projection-catalog.port';
import { UploadRecord, UploadRepository } from '../store/upload-repository.port';
import { ProjectionConfig, ProjectionNotificationSetup, UploadNotificationsView } from './projection-notification-setup.port';

/** `{notifications: {...}}` or the settings directly at top level: both are accepted. */
export function parseProjectionConfig(raw: string | undefined, field: string): ProjectionConfig | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  let v: any;
  try {
    v = JSON.parse(raw);
  } catch {
    throw validationFailed(field, 'must be a JSON object');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw validationFailed(field, 'must be a JSON object');
  const n = v.notifications && typeof v.notifications === 'object' ? v.notifications : v;
  const url = n.webhook?.url;
  if (url !== undefined && (typeof url !== 'string' || !/^https?:\/\//.test(url)))
    throw validationFailed(`${field}.webhook.url`, 'must be an http(s) URL');
  const name = v.name;
  if (name !== undefined && (typeof name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name))) {
    throw validationFailed(`${field}.name`, 'must be 1–100 letters, digits or . _ -');
  }
  return {
    ...(name ? { name } : {}),
    notifications: {
      ...(n.webhook ? { webhook: { url, isolateSecret: n.webhook.isolateSecret === true || n.isolateSecret === true } } : {}),
      ...(n.sse !== undefined ? { sse: n.sse === true } : {}),
    },
  };
}

const UPLOAD_NOTIFICATIONS_SCHEMA = object(
  {
    webhook: object({
      enabled: boolean(),
      secret: nullable(string({ description: 'the active webhook secret: store it securely' })),
      isolated: boolean({ description: "true: the projection's own secret; false: the tenant's shared one" }),
    }),
    sse: boolean({ description: 'whether the server-sent-events channel is enabled' }),
  },
  {},
  { description: 'only when notification config was given' },
);

/** POST /projections/upload (202): the current answer, or the earlier one when the config came as `notificationConfig`. */
export const PROJECTION_UPLOAD_ANSWER_SCHEMA = oneOf(
  object(
    {
      success: constant(true),
      uploadId: string({ format: 'uuid' }),
      projectionId: constant(null, { description: 'the stable id is assigned during compilation' }),
      status: constant('compiling'),
      message: string(),
    },
    { notifications: UPLOAD_NOTIFICATIONS_SCHEMA },
    { title: 'current' },
  ),
  object(
    { projectionId: string({ format: 'uuid' }), uploadId: string({ format: 'uuid' }), status: constant('pending_compilation') },
    {},
    { title: 'earlier (config sent as notificationConfig)' },
  ),
);
/** The 202 answer to an upload: the earlier shape, or the current one. */
export type ProjectionUploadAnswer = Infer<typeof PROJECTION_UPLOAD_ANSWER_SCHEMA>;

/** The tenant's `projections` limit (src/quotas): throws QUOTA_EXCEEDED when one more would pass it. */
export interface ProjectionQuota {
  admitProjection(tenantId: string, existing: number): Promise<void>;
}
const NO_PROJECTION_QUOTA: ProjectionQuota = { admitProjection: async () => undefined };

/**
 * Projection uploads: compiled in the background; the first compile of a name creates the
 * projection (stable projectionId) with this version active; a later one of the same name becomes
 * its pending version, catching up beside the active one until promoted.
 */
export class ProjectionCatalog {
  constructor(
    private readonly uploads: UploadRepository,
    private readonly repo: ProjectionCatalogRepository,
    private readonly log: EventLog,
    private readonly queue: CompileQueue,
    private readonly engine: LaneEngine,
    private readonly quota: ProjectionQuota = NO_PROJECTION_QUOTA,
    private readonly notifications?: ProjectionNotificationSetup,
  ) {}

  /**
   * POST /projections/upload, in either of the contract's shapes: the earlier one sends
   * `notificationConfig` (direct settings) and gets the earlier answer; the current one sends `config`.
   */
  async acceptUpload(tenantId: string, form: MultipartUpload): Promise<ProjectionUploadAnswer> {
    const { file, fields } = form;
    const earlier = fields.notificationConfig !== undefined && fields.config === undefined;
    const config = earlier
      ? parseProjectionConfig(fields.notificationConfig, 'notificationConfig')
      : parseProjectionConfig(fields.config, 'config');
    const { upload: u, notifications } = await this.upload(tenantId, file, config);
    if (earlier) return { projectionId: u.uploadId, uploadId: u.uploadId, status: 'pending_compilation' };
    return {
      success: true,
      uploadId: u.uploadId,
      projectionId: null,
      status: 'compiling',
      message: `compiling; poll GET /projections/${u.uploadId}/status until status is 'compiled' or type is 'runtime'`,
      ...(config && notifications ? { notifications } : {}),
    };
  }

  async upload(
    tenantId: string,
    zip: Buffer | undefined,
    config: ProjectionConfig | undefined,
  ): Promise<{ upload: UploadRecord; notifications?: UploadNotificationsView }> {
    if (!zip) throw validationFailed('file', 'a multipart part named "file" holding a zip archive is required');
    // Before the notifications setup, which may make a secret: a refused upload stores nothing.
    await this.queue.checkRoom(tenantId);
    // A name given in the config is known now: a new one past the limit is refused before anything is
    // stored. Without one, the name comes from the compile, and the deploy checks it (the upload fails).
    if (config?.name && !(await this.repo.getByName(tenantId, config.name)))
      await this.quota.admitProjection(tenantId, (await this.repo.list(tenantId)).length);
    const sources = await readSourceArchive(zip);
    const prepared = (await this.notifications?.prepare(tenantId, config)) ?? { meta: {} };
    const upload = await this.queue.submit({
      tenantId,
      kind: 'projection',
      sources,
      uploadId: randomUUID(),
      meta: { config: config ?? null, ...prepared.meta },
    });
    return { upload, notifications: prepared.response };
  }

  /** By uploadId, or by stable projectionId (then its active version's upload). */
  async find(tenantId: string, id: string): Promise<{ upload: UploadRecord; projection: ProjectionRecord | null }> {
    const byUpload = await this.uploads.get(tenantId, id);
    if (byUpload?.kind === 'projection') {
      const projection = byUpload.status === 'compiled' ? await this.projectionOf(tenantId, byUpload) : null;
      return { upload: byUpload, projection };
    }
    const projection = await this.repo.get(tenantId, id);
    const versionId = projection?.activeVersion ?? projection?.pendingVersion;
    const upload = versionId ? await this.uploads.get(tenantId, versionId) : null;
    if (!projection || !upload) throw notFound(`projection '${id}'`);
    return { upload, projection };
  }

  /** What the status record shows of the projection's webhook endpoint (null without one). */
  async webhookStatus(tenantId: string, p: ProjectionRecord): Promise<object | null> {
    return (await this.notifications?.webhookStatus?.(tenantId, p)) ?? null;
  }

  async list(tenantId: string): Promise<ProjectionRecord[]> {
    return this.repo.list(tenantId);
  }

  async projection(tenantId: string, projectionId: string): Promise<ProjectionRecord> {
    const p = await this.repo.get(tenantId, projectionId);
    if (!p) throw notFound(`projection '${projectionId}'`);
    return p;
  }

  /**
   * The deletion is written first (projection, versions with tombstones, log, deliveries, secret in
   * one transaction); then each version's router is stopped and its lanes and inbox purged. A
   * router, lane run or sweep still under way finds the version gone in the store and stops.
   */
  async remove(tenantId: string, projectionId: string): Promise<void> {
    const dropped = await this.repo.delete(tenantId, projectionId);
    if (!dropped) throw notFound(`projection '${projectionId}'`);
    for (const v of dropped) await this.engine.retire(tenantId, v);
  }

  private async projectionOf(tenantId: string, upload: UploadRecord): Promise<ProjectionRecord | null> {
    const version = await this.repo.getVersion(tenantId, upload.uploadId);
    return version ? this.repo.get(tenantId, version.projectionId) : null;
  }

  /** After a projection upload compiled (CompileWorker): creates the projection, or makes this its pending version. */
  async deploy(u: UploadRecord): Promise<void> {
    if (u.kind !== 'projection' || u.status !== 'compiled') return;
    const found = (u.discovered ?? []).find((d) => d.kind === 'projection');
    if (!found) {
      await this.uploads.markFailed(u.tenantId, u.uploadId, {
        compilationError: 'no implementation of IProjection<TState> found',
        at: Date.now(),
      });
      return;
    }
    const meta = u.meta as Record<string, unknown> & { config?: ProjectionConfig | null };
    const config = meta.config;
    const name = config?.name ?? found.projectionName ?? found.className;
    const existing = await this.repo.getByName(u.tenantId, name);
    if (!existing) {
      try {
        await this.quota.admitProjection(u.tenantId, (await this.repo.list(u.tenantId)).length);
      } catch (e) {
        if (!(e instanceof DomainError)) throw e;
        await this.uploads.markFailed(u.tenantId, u.uploadId, { compilationError: `${e.code}: ${e.message}`, at: Date.now() });
        return;
      }
    }
    const projectionId = existing?.projectionId ?? randomUUID();
    await this.repo.deploy({
      tenantId: u.tenantId,
      projectionId,
      name,
      version: {
        tenantId: u.tenantId,
        versionId: u.uploadId,
        projectionId,
        className: found.className,
        targetPosition: await this.log.headPosition(u.tenantId),
        createdAt: Date.now(),
      },
      ...this.notifications?.storedSettings(config),
    });
    await this.notifications?.deployed(u.tenantId, projectionId, existing, meta);
    // A newer redeploy replaced a pending one that had not caught up yet: the deploy dropped it
    // (unless it was promoted meanwhile: then its row is still there and it stays active).
    const replaced = existing?.pendingVersion && existing.pendingVersion !== u.uploadId ? existing.pendingVersion : null;
    if (replaced && !(await this.repo.getVersion(u.tenantId, replaced))) await this.engine.retire(u.tenantId, replaced);
    const v = await this.repo.getVersion(u.tenantId, u.uploadId);
    if (v) this.engine.track(v);
  }
}
