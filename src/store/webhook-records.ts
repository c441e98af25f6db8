/** A webhook secret as stored: encrypted text (see SecretCipher), never the plain secret. */
export interface WebhookSecretRecord {
  secret: string;
  /** The secret before the last rotation: deliveries are signed with it too until `previousUntil`. */
  previousSecret: string | null;
  previousUntil: number | null;
  rotatedAt: number;
}

/** Scope of the tenant's shared secret; an isolated secret's scope is its projectionId. */
export const TENANT_SCOPE = '';

export type DeliveryStatus = 'pending' | 'delivered' | 'dead';

export interface WebhookDelivery {
  tenantId: string;
  projectionId: string;
  sequence: number;
  stateKey: string;
  status: DeliveryStatus;
  /** Attempts started (counted when claimed, so a crash mid-send still counts). */
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

/** A webhook endpoint suspended at its tenant's pendingDeliveries limit. */
export interface WebhookSuspension {
  /** The oldest notification not delivered when it was suspended: where a resume starts. */
  resumeSequence: number;
  reason: string;
  suspendedAt: number;
}

/** A key whose oldest undelivered delivery waits with no head before it (see headlessKeys). */
export interface HeadlessKey {
  tenantId: string;
  projectionId: string;
  stateKey: string;
  /** The key's oldest waiting delivery: the one that should be its head. */
  sequence: number;
}
