import { Injectable } from '@nestjs/common';
import {
  ProjectionConfig,
  ProjectionNotificationSetup,
  UploadNotificationsView,
} from '../../projections/projection-notification-setup.port';
import { ProjectionRecord, StoredNotifySettings } from '../../store/projection-catalog.port';
import { WebhookEndpointState } from '../../store/webhook-endpoint-state.port';
import { parseSettings, settingsFromConfig, toStoredSettings } from '../log/notification-settings';
import { WebhookEndpoints, WebhookStatusView } from './webhook-endpoints';
import { WebhookSecrets } from './webhook-secrets';
import { WebhookUrlGuard } from './webhook-url-guard';

/** A projection's notification settings at upload (checked, secrets made) and at deploy (bound). */
@Injectable()
export class NotificationSetup implements ProjectionNotificationSetup {
  constructor(
    private readonly secrets: WebhookSecrets,
    private readonly webhooks: WebhookEndpointState,
    private readonly guard: WebhookUrlGuard,
    private readonly endpoints?: WebhookEndpoints,
  ) {}

  /** The webhook endpoint's state for the projection's status record; null without a webhook. */
  async webhookStatus(tenantId: string, p: ProjectionRecord): Promise<WebhookStatusView | null> {
    if (!this.endpoints || !parseSettings(p.notifyConfig).webhookUrl) return null;
    return this.endpoints.status(tenantId, p.projectionId);
  }

  async prepare(
    tenantId: string,
    config: ProjectionConfig | undefined,
  ): Promise<{ meta: Record<string, unknown>; response?: UploadNotificationsView }> {
    const s = settingsFromConfig(config);
    // Refused now rather than at the first delivery: after DNS, so a name pointing inside is caught too.
    if (!s.webhookUrl) return { meta: {}, response: { webhook: { enabled: false, secret: null, isolated: false }, sse: s.sse } };
    await this.guard.checkRegistration(s.webhookUrl);
    if (s.isolated) {
      const { plain, sealed } = this.secrets.newIsolated();
      return { meta: { webhookSecret: sealed }, response: { webhook: { enabled: true, secret: plain, isolated: true }, sse: s.sse } };
    }
    return {
      meta: {},
      response: { webhook: { enabled: true, secret: await this.secrets.tenantSecret(tenantId), isolated: false }, sse: s.sse },
    };
  }

  storedSettings(config: ProjectionConfig | null | undefined): StoredNotifySettings {
    return toStoredSettings(settingsFromConfig(config));
  }

  async deployed(tenantId: string, projectionId: string, before: ProjectionRecord | null, meta: Record<string, unknown>): Promise<void> {
    if (typeof meta.webhookSecret === 'string') await this.secrets.bindIsolated(tenantId, projectionId, meta.webhookSecret);
    // A webhook configured now starts with the changes from now on, not the log so far.
    if (before && !parseSettings(before.notifyConfig).webhookUrl) await this.webhooks.startDeliveriesNow(tenantId, projectionId);
  }
}
