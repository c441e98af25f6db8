import { Injectable } from '@nestjs/common';
import { LruMap } from '../../common/lru-map';
import { ProjectionCatalogRepository } from '../../store/projection-catalog.port';
import { parseSettings } from '../log/notification-settings';
import { WebhookSecrets } from './webhook-secrets';

/** Where a projection's deliveries go and the secrets that sign them. */
export interface WebhookTarget {
  url: string;
  secrets: string[];
}

const TARGET_CACHE_MS = 1_000;

/**
 * Where a projection's deliveries go and what signs them, cached for a second: a redeploy shows
 * within that. A rotation or a new isolated secret (on this instance) shows at once: an entry
 * read before the secrets' generation moved is not used (the previous secret keeps signing for
 * the overlap anyway). Asked by WebhookDispatcher (has it a webhook at all?) and by each attempt.
 */
@Injectable()
export class WebhookTargets {
  private readonly targets = new LruMap<string, { value: WebhookTarget | null; until: number; secretsGeneration: number }>(1_000);

  constructor(
    private readonly projections: ProjectionCatalogRepository,
    private readonly secrets: WebhookSecrets,
  ) {}

  async of(tenantId: string, projectionId: string): Promise<WebhookTarget | null> {
    const id = `${tenantId}\u0000${projectionId}`;
    const secretsGeneration = this.secrets.generation;
    const hit = this.targets.get(id);
    if (hit && hit.until > Date.now() && hit.secretsGeneration === secretsGeneration) return hit.value;
    const p = await this.projections.get(tenantId, projectionId);
    const settings = parseSettings(p?.notifyConfig ?? null);
    const value =
      p && settings.webhookUrl
        ? { url: settings.webhookUrl, secrets: await this.secrets.signing(tenantId, projectionId, settings.isolated) }
        : null;
    this.targets.set(id, { value, until: Date.now() + TARGET_CACHE_MS, secretsGeneration });
    return value;
  }
}
