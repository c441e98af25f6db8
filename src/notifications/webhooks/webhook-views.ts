import { isoTime } from '../../common/iso-time';
import { WebhookDelivery } from '../../store/webhook-repository.port';

export function deliveryView(d: WebhookDelivery) {
  return {
    sequence: d.sequence,
    stateKey: d.stateKey,
    status: d.status,
    attempts: d.attempts,
    nextAttemptAt: d.status === 'pending' ? isoTime(d.nextAttemptAt) : null,
    lastError: d.lastError,
    createdAt: isoTime(d.createdAt),
    updatedAt: isoTime(d.updatedAt),
  };
}
