/**
 * The one error family of the service. Domain code throws these; `error-http-mapping.ts`
 * turns each code into the contract's status and body, in one place.
 */
export const ERROR_CODES = [
  'VALIDATION_FAILED',
  'MALFORMED_JSON',
  'UNAUTHORIZED',
  'ADMIN_DISABLED',
  'FORBIDDEN',
  'NOT_FOUND',
  'VERSION_CONFLICT',
  'AGGREGATE_TYPE_MISMATCH',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'INVALID_ARCHIVE',
  'ARCHIVE_TOO_LARGE',
  'ALREADY_EXISTS',
  'NO_REDUCER_BOUND',
  'REDUCER_NOT_COMPILED',
  'NO_MATCHING_REDUCER',
  'REDUCER_FAILED',
  'REDUCER_REJECTED',
  'STATE_TOO_LARGE',
  'STATE_STALE',
  'RUNTIME_UNAVAILABLE',
  'SERVICE_UNAVAILABLE',
  'CURSOR_EXPIRED',
  'WEBHOOK_SECRET_SHARED',
  'WEBHOOK_URL_REFUSED',
  'SSE_DISABLED',
  'NOT_ACCEPTABLE',
  'REQUEST_TIMEOUT',
  'TOO_MANY_STREAMS',
  'TOO_MANY_PENDING_UPLOADS',
  'RATE_LIMITED',
  'QUOTA_EXCEEDED',
  'URI_TOO_LONG',
  'WEBHOOK_SUSPENDED',
  'WEBHOOK_NOT_SUSPENDED',
  'NOTIFICATION_EXPIRED',
  'INVALID_IDEMPOTENCY_KEY',
  'IDEMPOTENCY_KEY_REUSED',
  'TENANT_EXISTS',
  'IMPORT_INVALID',
  'IMPORT_TRUNCATED',
  'AGGREGATE_ERASED',
  'RESERVED_NAME',
  'DRY_RUN_RUNNING',
  'PROJECTION_LANE_HELD',
  'APPEND_CONDITION_FAILED',
  'INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra fields merged into the error body (e.g. expectedVersion/actualVersion). */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const validationFailed = (field: string, message: string): DomainError =>
  new DomainError('VALIDATION_FAILED', `${field}: ${message}`, { field });

export const notFound = (what: string): DomainError => new DomainError('NOT_FOUND', `${what} not found`);

export const versionConflict = (expectedVersion: number, actualVersion: number): DomainError =>
  new DomainError('VERSION_CONFLICT', `expected version ${expectedVersion} but the aggregate is at version ${actualVersion}`, {
    expectedVersion,
    actualVersion,
  });

/** The aggregate was erased (DELETE /events/{aggregateId}): its state and further appends are gone for good. */
export const aggregateErased = (aggregateId: string, erasedAt?: number): DomainError =>
  new DomainError('AGGREGATE_ERASED', `aggregate '${aggregateId}' was erased`, {
    aggregateId,
    ...(erasedAt !== undefined ? { erasedAt: new Date(erasedAt).toISOString() } : {}),
  });

/** Aggregate and event types starting with '$' are the service's own ($system, $erased). */
export const reservedName = (field: string, value: string): DomainError =>
  new DomainError('RESERVED_NAME', `${field} '${value}' is reserved: names starting with '$' belong to the service's own events`, {
    field,
  });

export const aggregateTypeMismatch = (given: string, actual: string): DomainError =>
  new DomainError('AGGREGATE_TYPE_MISMATCH', `aggregate has type '${actual}' (fixed by its first event); '${given}' was given`, {
    aggregateType: given,
    actualAggregateType: actual,
  });

/** An Idempotency-Key already used by the tenant, within its retention, for a different request (route or body). */
export const idempotencyKeyReused = (key: string): DomainError =>
  new DomainError('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was already used with a different request (route or body)', {
    idempotencyKey: key,
  });

/**
 * An append's condition (DCB, docs/dcb.md) failed: an event matching its query was stored after
 * `after` (or at all, without it). `position` is the first such event's; nothing was stored.
 */
export const appendConditionFailed = (position: number, after: number | undefined): DomainError =>
  new DomainError(
    'APPEND_CONDITION_FAILED',
    `an event matching the append condition is at position ${position}` + (after !== undefined ? ` (after ${after})` : ''),
    { position, ...(after !== undefined ? { after } : {}) },
  );
