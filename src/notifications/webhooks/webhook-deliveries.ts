import { Injectable } from '@nestjs/common';
import { notFound } from '../../common/domain-error';
import { WebhookDeliveryLog } from '../../store/webhook-delivery-log.port';
import { WebhookDelivery } from '../../store/webhook-records';
import { DeliveryFilter } from '../log/notification-page';
import { parseSettings } from '../log/notification-settings';
import { StoredProjectionLookup } from '../log/projection-lookup';
import { WebhookEndpoints, WebhookStatusView } from './webhook-endpoints';

/**
 * A projection's webhook as the operator sees it: its deliveries, dead ones replayed, the
 * endpoint's state and its resumption. Every call is about an existing projection (NOT_FOUND otherwise).
 */
@Injectable()
export class WebhookDeliveries {
  constructor(
    private readonly projections: StoredProjectionLookup,
    private readonly deliveries: WebhookDeliveryLog,
    private readonly endpoints: WebhookEndpoints,
  ) {}

  async list(tenantId: string, projectionId: string, filter: DeliveryFilter): Promise<WebhookDelivery[]> {
    await this.projections.projection(tenantId, projectionId);
    return this.deliveries.list(tenantId, projectionId, filter);
  }

  /** Dead-lettered deliveries back to pending: one (`sequence`) or all of the projection's (null). */
  async replay(tenantId: string, projectionId: string, sequence: number | null) {
    await this.projections.projection(tenantId, projectionId);
    return this.endpoints.replay(tenantId, projectionId, sequence, Date.now());
  }

  /** The endpoint's state; NOT_FOUND for a projection without a webhook. */
  async status(tenantId: string, projectionId: string): Promise<WebhookStatusView> {
    const p = await this.projections.projection(tenantId, projectionId);
    if (!parseSettings(p.notifyConfig).webhookUrl) throw notFound(`webhook of projection '${projectionId}'`);
    return this.endpoints.status(tenantId, projectionId);
  }

  /** A suspended endpoint delivers again: from the oldest undelivered notification, or after `afterSequence`. */
  async resume(
    tenantId: string,
    projectionId: string,
    afterSequence: number | undefined,
  ): Promise<{ afterSequence: number; skipped: number; resumedAt: number }> {
    await this.projections.projection(tenantId, projectionId);
    const r = await this.endpoints.resume(tenantId, projectionId, afterSequence);
    return { ...r, resumedAt: Date.now() };
  }
}
