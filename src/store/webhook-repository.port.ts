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

/** Secrets and the durable delivery queue of webhooks. */
export interface WebhookRepository {
  getSecret(tenantId: string, scope: string): Promise<WebhookSecretRecord | null>;
  /** Stores `secret` unless the scope has one already; returns what is stored. */
  ensureSecret(tenantId: string, scope: string, secret: string, now: number): Promise<WebhookSecretRecord>;
  /** Replaces the scope's secret; the replaced one keeps signing until `overlapUntil`. */
  replaceSecret(tenantId: string, scope: string, secret: string, now: number, overlapUntil: number): Promise<WebhookSecretRecord>;
  /** Deliveries start from the projection's current notifications (a newly configured webhook does not replay the past). */
  startDeliveriesNow(tenantId: string, projectionId: string): Promise<void>;
  /** Projections with a webhook and notifications not yet turned into deliveries. */
  backlogged(limit: number): Promise<{ tenantId: string; projectionId: string }[]>;
  /** Turns up to `limit` notifications after the projection's webhook cursor into pending deliveries. */
  enqueue(tenantId: string, projectionId: string, limit: number, now: number): Promise<number>;
  /**
   * Tenants with a pending delivery due now, in tenant id order starting after `after` and
   * wrapping round to the start (the dispatcher's turn order). Found by an index walk over tenants
   * with pending deliveries: tenants without any cost nothing.
   */
  tenantsWithDue(now: number, after: string, limit: number): Promise<string[]>;
  /**
   * For each tenant, up to `perTenant` pending deliveries due now whose key has no earlier pending
   * delivery (order per key), earliest due first; one statement for all of them.
   */
  dueOfTenants(tenantIds: string[], now: number, perTenant: number): Promise<WebhookDelivery[]>;
  /** Takes a due delivery for one attempt (counts it; next try not before `until`); false if another took it. */
  claim(d: WebhookDelivery, until: number): Promise<boolean>;
  delivered(d: WebhookDelivery, now: number): Promise<void>;
  /** After a failed attempt: retry at `retryAt`, or dead-letter when it is null. */
  attemptFailed(d: WebhookDelivery, error: string, retryAt: number | null, now: number): Promise<void>;
  list(
    tenantId: string,
    projectionId: string,
    opts: { status?: DeliveryStatus; afterSequence: number; limit: number },
  ): Promise<WebhookDelivery[]>;
  /**
   * Dead deliveries (one, or all of the projection's) go back to pending, due now; only those after
   * `afterSequence` (the ones whose notification retention still keeps). Returns how many.
   */
  replay(tenantId: string, projectionId: string, sequence: number | null, now: number, afterSequence?: number): Promise<number>;
  /**
   * Keys whose oldest waiting delivery has no pending head, up to `limit`: deliveries that would
   * otherwise never be attempted. The head rule keeps this empty; the repair sweep asks.
   */
  headlessKeys(limit: number): Promise<HeadlessKey[]>;
  /**
   * Makes `k.sequence` its key's head if it still is the key's oldest undelivered delivery and
   * the key still has no head (checked under the key's lock); false if nothing needed doing.
   */
  repairHead(k: HeadlessKey): Promise<boolean>;
  /** Removes delivered rows older than `before`. */
  forgetDelivered(before: number): Promise<number>;
  /** Removes dead rows that died before `before` (WEBHOOK_DEAD_KEEP_MS). */
  forgetDead(before: number): Promise<number>;
  /** Dead deliveries of the projection at or below `sequence` (their notifications are gone). */
  countDead(tenantId: string, projectionId: string, atOrBelow: number): Promise<number>;
  /** The projection's pending deliveries, counted up to `cap` (the limit: no need to count past it). */
  pendingCount(tenantId: string, projectionId: string, cap: number): Promise<number>;
  /** Whether an attempt of one of the projection's pending deliveries has failed (the receiver is failing, not just busy). */
  pendingFailing(tenantId: string, projectionId: string): Promise<boolean>;
  suspension(tenantId: string, projectionId: string): Promise<WebhookSuspension | null>;
  /**
   * Suspends the endpoint, atomically: remembers the oldest undelivered sequence, drops its pending
   * deliveries (the log still has them; a resume makes them again). A suspended one stays as it is.
   */
  suspend(tenantId: string, projectionId: string, reason: string, now: number): Promise<WebhookSuspension>;
  /**
   * Lifts the suspension and moves the webhook cursor to `afterSequence`: deliveries are made again
   * from the next. False if not suspended.
   */
  resume(tenantId: string, projectionId: string, afterSequence: number): Promise<boolean>;
}
