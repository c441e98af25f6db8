import { Injectable } from '@nestjs/common';
import { AppMetrics, secondsSince } from '../../observability/metrics/app-metrics';
import { endWebhookAttemptSpan, startWebhookAttemptSpan } from '../../observability/tracing/spans';
import { traceParentOf } from '../../observability/tracing/tracing';
import { NotificationRepository } from '../../store/notification-repository.port';
import { WebhookDeliveryQueue } from '../../store/webhook-delivery-queue.port';
import { WebhookDelivery } from '../../store/webhook-records';
import { streamText } from '../log/notification';
import { WebhookDispatcherOptions } from './webhook-dispatcher-options';
import { WebhookSender } from './webhook-sender';
import { WebhookSigner } from './webhook-signer';
import { WebhookTargets } from './webhook-targets';

/**
 * One attempt of a claimed delivery: its notification read, signed (current + overlapping previous
 * secret), POSTed (WebhookSender), then delivered | retry at backoff | dead. WebhookDeliveryRound
 * starts it once the claim is won.
 */
@Injectable()
export class WebhookDeliveryAttempt {
  constructor(
    private readonly queue: WebhookDeliveryQueue,
    private readonly notifications: NotificationRepository,
    private readonly targets: WebhookTargets,
    private readonly sender: WebhookSender,
    private readonly options: WebhookDispatcherOptions,
    private readonly metrics: AppMetrics,
  ) {}

  async attempt(d: WebhookDelivery): Promise<void> {
    const [[n], target] = await Promise.all([
      this.notifications.read(d.tenantId, d.projectionId, d.sequence - 1, 1),
      this.targets.of(d.tenantId, d.projectionId),
    ]);
    if (!n || n.sequence !== d.sequence || !target) {
      this.metrics.webhookDeadLettered();
      await this.queue.attemptFailed(
        d,
        !target ? 'webhook no longer configured' : 'NOTIFICATION_EXPIRED: removed by retention',
        null,
        Date.now(),
      );
      return;
    }
    const { url, secrets } = target;
    const body = streamText(n);
    const headers: Record<string, string> = {
      ...WebhookSigner.headers(secrets, `msg_${d.projectionId}_${d.sequence}`, Math.floor(Date.now() / 1000), body),
      // Lets a receiver see a gap and backfill from GET /projections/{id}/notifications.
      'webhook-sequence': String(d.sequence),
      'webhook-projection-id': d.projectionId,
    };
    // The notification's trace goes on to the receiver: through the attempt's span when tracing is
    // on, else as stored (the caller's own traceparent: the service adds no span of its own).
    const span = startWebhookAttemptSpan(n.traceParent, url, d);
    if (span) headers.traceparent = traceParentOf(span)!;
    else if (n.traceParent) headers.traceparent = n.traceParent;
    if (headers.traceparent && n.traceState) headers.tracestate = n.traceState;
    const sent = performance.now();
    const r = await this.sender.send(url, headers, body);
    endWebhookAttemptSpan(span, r);
    const now = Date.now();
    const delay = this.options.backoffMs[d.attempts - 1];
    this.metrics.webhookAttempted(r.ok ? 'delivered' : delay === undefined ? 'dead' : 'failed', secondsSince(sent));
    if (r.ok) return this.queue.delivered(d, now);
    await this.queue.attemptFailed(d, r.error, delay === undefined ? null : now + delay, now);
  }
}
