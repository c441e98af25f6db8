import { isoTime } from '../../common/iso-time';
import { arrayOf, constant, Infer, integer, nullable, object, oneOfStrings, string, timestamp } from '../../common/json-schema';
import { WebhookDelivery } from '../../store/webhook-records';

export function deliveryView(d: WebhookDelivery): Delivery {
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

const DELIVERY_SCHEMA = object({
  sequence: integer(),
  stateKey: string(),
  status: oneOfStrings(['pending', 'delivered', 'dead']),
  attempts: integer(),
  nextAttemptAt: nullable(timestamp({ description: 'while pending' })),
  lastError: nullable(string()),
  createdAt: timestamp(),
  updatedAt: timestamp(),
});
export type Delivery = Infer<typeof DELIVERY_SCHEMA>;

export const DELIVERIES_SCHEMA = object({ deliveries: arrayOf(DELIVERY_SCHEMA) });

/** POST /projections/{id}/webhook/rotate: the contract's current fields and the earlier `rotatedAt`. */
export function projectionRotatedView(projectionId: string, r: { secret: string; rotatedAt: number }): ProjectionRotated {
  return { projectionId, webhook: { secret: r.secret, isolated: true as const }, rotatedAt: isoTime(r.rotatedAt) };
}
export const PROJECTION_ROTATED_SCHEMA = object({
  projectionId: string(),
  webhook: object({ secret: string({ description: 'the new webhook secret: store it securely' }), isolated: constant(true) }),
  rotatedAt: timestamp({ description: 'earlier shape' }),
});
export type ProjectionRotated = Infer<typeof PROJECTION_ROTATED_SCHEMA>;

/** POST /webhooks/rotate: the contract's current field and the earlier `rotatedAt`. */
export function tenantRotatedView(r: { secret: string; rotatedAt: number }): TenantRotated {
  return { webhook: { secret: r.secret }, rotatedAt: isoTime(r.rotatedAt) };
}
export const TENANT_ROTATED_SCHEMA = object({
  webhook: object({ secret: string({ description: "the tenant's new shared webhook secret" }) }),
  rotatedAt: timestamp({ description: 'earlier shape' }),
});
export type TenantRotated = Infer<typeof TENANT_ROTATED_SCHEMA>;

export const REPLAYED_SCHEMA = object(
  { projectionId: string(), replayed: integer({ description: 'dead-lettered deliveries made pending again' }) },
  {
    expired: integer({ description: 'dead letters whose notification retention had removed (not replayed)' }),
    oldestSequence: integer(),
  },
);

export function resumedView(projectionId: string, r: { afterSequence: number; skipped: number; resumedAt: number }): Resumed {
  return {
    projectionId,
    webhook: { status: 'active' as const },
    afterSequence: r.afterSequence,
    skipped: r.skipped,
    resumedAt: isoTime(r.resumedAt),
  };
}
export const RESUMED_SCHEMA = object({
  projectionId: string(),
  webhook: object({ status: constant('active') }),
  afterSequence: integer({ description: 'deliveries start after this sequence' }),
  skipped: integer({ description: 'undelivered notifications passed over by the resume' }),
  resumedAt: timestamp(),
});
export type Resumed = Infer<typeof RESUMED_SCHEMA>;
