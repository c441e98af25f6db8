import { Injectable } from '@nestjs/common';
import { Infer, integer, nullable, object, oneOfStrings, string, timestamp } from '../../common/json-schema';
import { DomainError, validationFailed } from '../../common/domain-error';
import { isoTime } from '../../common/iso-time';
import { NotificationRepository } from '../../store/notification-repository.port';
import { WebhookDeliveryLog } from '../../store/webhook-delivery-log.port';
import { WebhookEndpointState } from '../../store/webhook-endpoint-state.port';
import { NotifiedProjections } from '../log/notified-projections.port';
import { TenantWebhookQuota } from './tenant-webhook-quota.port';

/** What the status record and GET …/webhook say of an endpoint. */
const ENDPOINT_STATUS_SCHEMA = object({
  status: oneOfStrings(['active', 'suspended']),
  pendingDeliveries: integer({ description: 'deliveries waiting, counted up to the limit' }),
  pendingDeliveriesLimit: integer({ description: 'past it the endpoint is suspended (0: no limit)' }),
  deadDeliveries: integer(),
  suspendedAt: nullable(timestamp()),
  suspendedReason: nullable(string()),
  resumeFromSequence: nullable(integer({ description: 'while suspended: where a resume starts' })),
});
/** GET /projections/{id}/webhook. */
export const WEBHOOK_STATUS_SCHEMA = object({ projectionId: string(), webhook: ENDPOINT_STATUS_SCHEMA });

export type WebhookStatusView = Infer<typeof ENDPOINT_STATUS_SCHEMA>;

const ALL = Number.MAX_SAFE_INTEGER;

/**
 * The operator's side of a webhook endpoint: its status, resuming a suspended one, replaying dead
 * deliveries. Suspension itself is the dispatcher's (it sees the backlog grow).
 */
@Injectable()
export class WebhookEndpoints {
  constructor(
    private readonly state: WebhookEndpointState,
    private readonly log: WebhookDeliveryLog,
    private readonly notifications: NotificationRepository,
    private readonly limits: TenantWebhookQuota,
    /** Where a resumed endpoint's deliveries are made: the dispatcher, woken for the projection. */
    private readonly dispatcher: NotifiedProjections,
  ) {}

  async status(tenantId: string, projectionId: string): Promise<WebhookStatusView> {
    const limit = await this.limits.pendingDeliveries(tenantId);
    const [suspension, pending, dead] = await Promise.all([
      this.state.suspension(tenantId, projectionId),
      this.state.pendingCount(tenantId, projectionId, limit > 0 ? limit : ALL),
      this.log.countDead(tenantId, projectionId, ALL),
    ]);
    return {
      status: suspension ? 'suspended' : 'active',
      pendingDeliveries: pending,
      pendingDeliveriesLimit: limit,
      deadDeliveries: dead,
      suspendedAt: suspension ? isoTime(suspension.suspendedAt) : null,
      suspendedReason: suspension?.reason ?? null,
      resumeFromSequence: suspension?.resumeSequence ?? null,
    };
  }

  /**
   * Deliveries start again after `afterSequence` (default: just before the oldest undelivered one).
   * If retention has removed notifications from there, 410 CURSOR_EXPIRED with the oldest kept,
   * and the endpoint stays suspended: the caller sees the gap and resumes after it explicitly.
   */
  async resume(
    tenantId: string,
    projectionId: string,
    afterSequence: number | undefined,
  ): Promise<{ afterSequence: number; skipped: number }> {
    const suspension = await this.state.suspension(tenantId, projectionId);
    if (!suspension) throw new DomainError('WEBHOOK_NOT_SUSPENDED', `the webhook of projection '${projectionId}' is not suspended`);
    const head = await this.notifications.head(tenantId, projectionId);
    const pruned = head?.prunedSequence ?? 0;
    const last = head?.lastSequence ?? 0;
    const from = suspension.resumeSequence - 1;
    const after = afterSequence ?? from;
    if (after > last) throw validationFailed('afterSequence', `must not be past the last sequence (${last})`);
    if (after < pruned) {
      throw new DomainError(
        'CURSOR_EXPIRED',
        `notifications ${after + 1}–${pruned} were removed by retention while the webhook was suspended; they cannot be delivered any more: resume with afterSequence ≥ ${pruned} to accept the gap`,
        { oldestSequence: pruned + 1, afterSequence: after },
      );
    }
    if (!(await this.state.resume(tenantId, projectionId, after))) {
      throw new DomainError('WEBHOOK_NOT_SUSPENDED', `the webhook of projection '${projectionId}' is not suspended`);
    }
    this.dispatcher.notified(tenantId, projectionId);
    return { afterSequence: after, skipped: Math.max(0, after - from) };
  }

  /**
   * Dead deliveries back to pending. One whose notification retention removed cannot be sent:
   * NOTIFICATION_EXPIRED for `{sequence}`; counted as `expired` in a replay of all.
   */
  async replay(
    tenantId: string,
    projectionId: string,
    sequence: number | null,
    now: number,
  ): Promise<{ replayed: number; expired?: number; oldestSequence?: number }> {
    if (await this.state.suspension(tenantId, projectionId)) {
      throw new DomainError(
        'WEBHOOK_SUSPENDED',
        `the webhook of projection '${projectionId}' is suspended: resume it first (POST /projections/${projectionId}/webhook/resume)`,
      );
    }
    const pruned = (await this.notifications.head(tenantId, projectionId))?.prunedSequence ?? 0;
    if (sequence !== null) {
      if (sequence <= pruned) {
        throw new DomainError(
          'NOTIFICATION_EXPIRED',
          `notification ${sequence} was removed by retention and cannot be delivered again (oldest kept: ${pruned + 1})`,
          {
            sequence,
            oldestSequence: pruned + 1,
          },
        );
      }
      return { replayed: await this.log.replay(tenantId, projectionId, sequence, now) };
    }
    const replayed = await this.log.replay(tenantId, projectionId, null, now, pruned);
    const expired = pruned > 0 ? await this.log.countDead(tenantId, projectionId, pruned) : 0;
    return { replayed, expired, ...(expired > 0 ? { oldestSequence: pruned + 1 } : {}) };
  }
}
