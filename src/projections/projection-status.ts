import { ProjectionRecord } from '../store/projection-catalog.port';
import { UploadRecord } from '../store/upload-repository.port';
import { ApplyLag } from './projection-reader';
import { projectionStatusView } from './projection-views';

export interface ProjectionStatusDeps {
  /** By uploadId or projectionId; NOT_FOUND when neither. */
  find(tenantId: string, id: string): Promise<{ upload: UploadRecord; projection: ProjectionRecord | null }>;
  /** A version's lag, or undefined when it cannot be had quickly. */
  lag(tenantId: string, versionId: string): Promise<ApplyLag | undefined>;
  /** What the status record shows of the projection's webhook endpoint (null without one). */
  webhookStatus(tenantId: string, p: ProjectionRecord): Promise<object | null>;
}

/** The status record of GET /projections/{id}/status: the upload, its deployed versions (with their lag if asked) and the webhook. */
export class ProjectionStatus {
  constructor(private readonly deps: ProjectionStatusDeps) {}

  async read(tenantId: string, id: string, opts: { withLag: boolean }) {
    const { upload, projection } = await this.deps.find(tenantId, id);
    const lag = opts.withLag && projection ? await this.lagOf(tenantId, projection) : undefined;
    const webhook = projection ? await this.deps.webhookStatus(tenantId, projection) : null;
    return { ...projectionStatusView(upload, projection, lag), ...(webhook ? { webhook } : {}) };
  }

  /** Both versions' lag at once: each is bounded by the reader's timeout, so together they are too. */
  private async lagOf(tenantId: string, p: ProjectionRecord): Promise<{ active?: ApplyLag; pending?: ApplyLag }> {
    const [active, pending] = await Promise.all([
      p.activeVersion ? this.deps.lag(tenantId, p.activeVersion) : undefined,
      p.pendingVersion ? this.deps.lag(tenantId, p.pendingVersion) : undefined,
    ]);
    return { active, pending };
  }
}
