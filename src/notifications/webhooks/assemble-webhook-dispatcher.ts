import { AppMetrics, NO_METRICS } from '../../observability/metrics/app-metrics';
import { NotificationRepository } from '../../store/notification-repository.port';
import { ProjectionCatalogRepository } from '../../store/projection-catalog.port';
import { WebhookDeliveryQueue } from '../../store/webhook-delivery-queue.port';
import { WebhookEndpointState } from '../../store/webhook-endpoint-state.port';
import { WebhookHeadRepair } from '../../store/webhook-head-repair.port';
import { DeliveryTick } from './delivery-tick';
import { NO_TENANT_WEBHOOK_QUOTA, TenantWebhookQuota } from './tenant-webhook-quota.port';
import { WebhookDeliveryAttempt } from './webhook-delivery-attempt';
import { WebhookDeliveryRound } from './webhook-delivery-round';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhookDispatcherOptions } from './webhook-dispatcher-options';
import { WebhookSecrets } from './webhook-secrets';
import { WebhookSender } from './webhook-sender';
import { WebhookTargets } from './webhook-targets';

/** What a WebhookDispatcher is made of, for those that assemble one without Nest (tests, benches). */
export interface WebhookDispatcherParts {
  webhooks: WebhookDeliveryQueue & WebhookHeadRepair & WebhookEndpointState;
  notifications: Pick<NotificationRepository, 'read' | 'head'>;
  projections: Pick<ProjectionCatalogRepository, 'get'>;
  secrets: WebhookSecrets;
  sender: Pick<WebhookSender, 'send'>;
  options: WebhookDispatcherOptions;
  quota?: TenantWebhookQuota;
  metrics?: AppMetrics;
}

/** The dispatcher and its parts, wired as NotificationsModule's providers wire them. */
export function assembleWebhookDispatcher(p: WebhookDispatcherParts): WebhookDispatcher {
  const notifications = p.notifications as NotificationRepository;
  const metrics = p.metrics ?? NO_METRICS;
  const targets = new WebhookTargets(p.projections as ProjectionCatalogRepository, p.secrets);
  const attempt = new WebhookDeliveryAttempt(p.webhooks, notifications, targets, p.sender as WebhookSender, p.options, metrics);
  const round = new WebhookDeliveryRound(p.webhooks, p.webhooks, notifications, attempt, p.options, p.quota ?? NO_TENANT_WEBHOOK_QUOTA);
  return new WebhookDispatcher(new DeliveryTick(round, p.options), round, targets, p.webhooks, p.options, metrics);
}
