import { DomainError } from '../../common/domain-error';
import { TENANT_SCOPE } from '../../store/webhook-records';
import { parseSettings } from '../log/notification-settings';
import { ProjectionLookup } from '../log/projection-lookup';

export interface SecretRotator {
  /** A new secret for the scope (a projection id, or the tenant's shared scope); the previous one still verifies for the overlap. */
  rotate(tenantId: string, scope: string): Promise<{ secret: string; rotatedAt: number }>;
}

/** Rotation of a webhook signing secret: a projection's own (isolated) one, or the tenant's shared one. */
export class WebhookSecretRotation {
  constructor(
    private readonly projections: ProjectionLookup,
    private readonly secrets: SecretRotator,
  ) {}

  /** Only a projection with an isolated secret has one of its own to rotate. */
  async rotateProjection(tenantId: string, projectionId: string): Promise<{ secret: string; rotatedAt: number }> {
    const p = await this.projections.projection(tenantId, projectionId);
    if (!parseSettings(p.notifyConfig).isolated) {
      throw new DomainError(
        'WEBHOOK_SECRET_SHARED',
        `projection '${projectionId}' signs with the tenant's shared secret: rotate it with POST /webhooks/rotate`,
      );
    }
    return this.secrets.rotate(tenantId, projectionId);
  }

  /** A tenant without a secret yet simply gets one (no previous one to overlap with). */
  async rotateTenant(tenantId: string): Promise<{ secret: string; rotatedAt: number }> {
    return this.secrets.rotate(tenantId, TENANT_SCOPE);
  }
}
