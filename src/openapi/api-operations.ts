import { ErrorCode } from '../common/domain-error';
import { integer, JsonSchema, object, string } from '../common/json-schema';
import { SchemaName } from './response-schemas';

/**
 * What the route metadata cannot say about each operation: its words, which shapes its answers
 * take (named in response-schemas.ts, written beside their views), and which domain errors it
 * may answer (their statuses come from common/error-http-mapping.ts). Keyed `METHOD /path`; the
 * generator refuses a route without an entry and an entry without a route, so this table and the
 * controllers move together. Auth, request bodies, integer query parameters and the errors every
 * route of a kind shares come from the routes themselves (openapi-document.ts).
 */
export interface ResponseSpec {
  description: string;
  schema?: SchemaName | JsonSchema;
  /** application/json unless said. */
  contentType?: string;
}

export interface ParameterSpec {
  description?: string;
  /** For the parameters of a whole-query pipe (the route cannot say their type); a named one is a string otherwise. */
  schema?: JsonSchema;
}

export interface OperationSpec {
  tag: Tag;
  summary: string;
  description?: string;
  responses: Record<number, ResponseSpec>;
  errors?: ErrorCode[];
  parameters?: Record<string, ParameterSpec>;
  /**
   * The route exists only in some configurations (a module that registers its controller only when
   * enabled): its absence is not a stale entry. Say which configuration.
   */
  onlyWhen?: string;
  /** A body the route reads without a DTO (multipart uploads, admin bodies checked by their services). */
  body?: { contentType: string; schema: SchemaName | JsonSchema; description?: string };
}

export const TAGS = {
  events: 'Append and read events',
  reducers: 'Reducer uploads and bindings; aggregate state',
  projections: 'Projection uploads, status, state and lanes',
  notifications: 'Polling, WebSocket and server-sent events',
  webhooks: 'Webhook secrets, deliveries, suspension',
  'event-webhooks': "Event webhooks: the tenant's log delivered to a URL",
  system: 'Health, identity, this document',
  keys: "The tenant's API keys (scope keys:manage)",
  admin: 'Admin API (ADMIN_TOKEN)',
} as const;
export type Tag = keyof typeof TAGS;

const json = (description: string, schema: SchemaName | JsonSchema): ResponseSpec => ({ description, schema });
const noContent = (description: string): ResponseSpec => ({ description });

const CURSOR = {
  afterSequence: { description: 'notifications after this sequence (0: from the oldest kept)', schema: integer({ minimum: 0 }) },
};
const PAGE = {
  ...CURSOR,
  limit: { description: 'at most this many (NOTIFICATIONS_PAGE_DEFAULT, up to NOTIFICATIONS_PAGE_MAX)', schema: integer({ minimum: 1 }) },
};
/** README "Retrying appends safely". */
const IDEMPOTENCY_KEY = {
  'Idempotency-Key': {
    description:
      '1-255 visible ASCII characters (bare or as a quoted string): a repeat of the same route and body within IDEMPOTENCY_KEYS_KEEP_MS (24 h) stores nothing and answers the first 201 again with Idempotent-Replayed: true; per tenant',
  },
};
const IDEMPOTENCY_ERRORS: ErrorCode[] = ['INVALID_IDEMPOTENCY_KEY', 'IDEMPOTENCY_KEY_REUSED'];
const DIRECTION = { direction: { description: 'forward (default) or backward', schema: { enum: ['forward', 'backward'] } } };
const LOG_FILTERS = {
  aggregateType: { description: 'only these aggregate types: a comma-separated list of up to 20', schema: string() },
  eventType: { description: 'only these event types: a comma-separated list of up to 20', schema: string() },
};
const ARCHIVE_ERRORS: ErrorCode[] = ['INVALID_ARCHIVE', 'ARCHIVE_TOO_LARGE', 'VALIDATION_FAILED'];

const REDUCER_UPLOAD_BODY = object(
  {
    file: string({ contentMediaType: 'application/zip', description: 'zip of .cs sources with at least one reducer implementation' }),
  },
  { reducerId: string({ description: 'the id to give the upload (else a UUID)' }) },
);
const PROJECTION_UPLOAD_BODY = object(
  { file: string({ contentMediaType: 'application/zip', description: 'zip of .cs sources with a projection implementation' }) },
  {
    config: string({
      contentMediaType: 'application/json',
      description:
        'JSON: the notification settings ({webhook: {url, …}, sse, isolateSecret}) wrapped as {notifications: {…}} or at top level; name',
    }),
    notificationConfig: string({ contentMediaType: 'application/json', description: 'earlier shape: the notification settings directly' }),
  },
);

/** The W3C trace context an append keeps with its events (docs/notifications.md, Trace context). */
const TRACE_CONTEXT_HEADERS = {
  traceparent: {
    description:
      'W3C traceparent: kept with each event and passed on to its notifications, streams and webhooks; an invalid one is ignored',
  },
  tracestate: { description: 'W3C tracestate: kept with a valid traceparent (≤ 512 characters, ≤ 32 members), else dropped' },
};

export const OPERATIONS: Record<string, OperationSpec> = {
  // Events
  'POST /events': {
    tag: 'events',
    summary: 'Append one event',
    parameters: { ...IDEMPOTENCY_KEY, ...TRACE_CONTEXT_HEADERS },
    responses: {
      201: json('appended; state when a reducer is bound to the type (a replay: the first answer, Idempotent-Replayed: true)', 'Appended'),
    },
    errors: [
      'VERSION_CONFLICT',
      'AGGREGATE_TYPE_MISMATCH',
      'AGGREGATE_ERASED',
      'RESERVED_NAME',
      'RUNTIME_UNAVAILABLE',
      ...IDEMPOTENCY_ERRORS,
    ],
  },
  'POST /events/batch': {
    tag: 'events',
    summary: 'Append several events to one aggregate atomically (all or none)',
    parameters: { ...IDEMPOTENCY_KEY, ...TRACE_CONTEXT_HEADERS },
    responses: { 201: json('appended (a replay: the first answer, Idempotent-Replayed: true)', 'BatchAppended') },
    errors: [
      'VERSION_CONFLICT',
      'AGGREGATE_TYPE_MISMATCH',
      'AGGREGATE_ERASED',
      'RESERVED_NAME',
      'RUNTIME_UNAVAILABLE',
      ...IDEMPOTENCY_ERRORS,
    ],
  },
  'GET /events/{aggregateId}': {
    tag: 'events',
    summary: "Read an aggregate's events, in version order (or newest first with direction=backward)",
    parameters: {
      fromVersion: { description: 'first version to return (forward only; default 1)' },
      beforeVersion: { description: 'direction=backward: versions below this one (default: from the last)' },
      ...DIRECTION,
      limit: { description: 'page size' },
    },
    responses: { 200: json('a page of the stream (empty for an unknown aggregate)', 'StoredEventsPage') },
    errors: ['VALIDATION_FAILED'],
  },
  'GET /events': {
    tag: 'events',
    summary: 'Read the tenant\'s log in position order (README, "Reading the log")',
    parameters: {
      afterPosition: { description: 'forward: events after this position (default 0: from the start)' },
      beforePosition: { description: 'direction=backward: events before this position (default: from the head)' },
      ...DIRECTION,
      limit: { description: 'page size (default 1,000, at most 10,000)' },
      ...LOG_FILTERS,
    },
    responses: { 200: json('a page of the log; nextAfterPosition (forward) / nextBeforePosition (backward) to go on', 'LogPage') },
    errors: ['VALIDATION_FAILED'],
  },
  'GET /events/stream': {
    tag: 'events',
    summary: "Follow the tenant's log live: a WebSocket upgrade, or server-sent events",
    description:
      'With `Upgrade: websocket` (the key in X-API-Key, `?apiKey=` or the subprotocol `apikey.<key>`): 101, then one ' +
      "`{type: 'event', …}` message (EventStreamMessage) per event after afterPosition (absent: from the head), then live; " +
      "`{type: 'ping'}` keepalives to answer with `{type: 'pong'}`. With `Accept: text/event-stream`: server-sent events, one " +
      '`event` per event, its position as the id (Last-Event-ID resumes). Any other GET reads the aggregate named `stream` ' +
      '(as GET /events/{aggregateId}, with its parameters).',
    parameters: {
      afterPosition: { description: 'start after this position (absent: the head, live events only)', schema: integer({ minimum: 0 }) },
      ...LOG_FILTERS,
      'last-event-id': { description: 'SSE: the id (position) of the last event received; wins over afterPosition' },
      fromVersion: { description: 'the aggregate `stream` only' },
      beforeVersion: { description: 'the aggregate `stream` only' },
      ...DIRECTION,
      limit: { description: 'the aggregate `stream` only' },
    },
    responses: {
      101: { description: 'WebSocket: switching protocols; messages are EventStreamMessage', schema: 'EventStreamMessage' },
      200: {
        description: 'server-sent events (each data an EventStreamMessage); without Accept: text/event-stream, the aggregate `stream`',
        contentType: 'text/event-stream',
        schema: string(),
      },
    },
    errors: ['VALIDATION_FAILED', 'TOO_MANY_STREAMS'],
  },
  'DELETE /events/{aggregateId}': {
    tag: 'events',
    summary: 'Erase an aggregate for good: its events\' data and metadata, its state, the notifications they caused (README "Erasure")',
    description:
      'Keeps each event as a tombstone (eventId, version, position, eventType, timestamp; data {} and erasedAt on reads) and appends ' +
      'a $erased event (aggregate type $system, stream $erasures) in the same transaction. Its state read and further appends ' +
      'then answer 410 AGGREGATE_ERASED. Erasing again answers 200 with the first erasure. Scope events:erase.',
    responses: { 200: json('erased (or erased before: the same answer)', 'Erased') },
    errors: ['NOT_FOUND', 'RESERVED_NAME'],
  },
  // Reducers and aggregate types
  'POST /reducers/upload': {
    tag: 'reducers',
    summary: 'Upload a reducer archive (compiled in the background)',
    body: { contentType: 'multipart/form-data', schema: REDUCER_UPLOAD_BODY },
    responses: { 202: json('accepted, compiling', 'ReducerUploadAnswer') },
    errors: [...ARCHIVE_ERRORS, 'ALREADY_EXISTS'],
  },
  'GET /reducers/{id}/status': {
    tag: 'reducers',
    summary: "A reducer upload's compilation record (current and earlier fields together)",
    responses: { 200: json('the record', 'ReducerRecord') },
    errors: ['NOT_FOUND'],
  },
  'PUT /aggregate-types/{type}': {
    tag: 'reducers',
    summary: 'Bind a reducer to an aggregate type (state catch-up starts)',
    responses: { 200: json('bound', 'Bound') },
    errors: ['NOT_FOUND', 'REDUCER_NOT_COMPILED', 'NO_MATCHING_REDUCER'],
  },
  'GET /aggregate-types/{type}': {
    tag: 'reducers',
    summary: "An aggregate type's binding and its catch-up",
    responses: { 200: json('the binding', 'Binding') },
    errors: ['NOT_FOUND'],
  },
  'GET /aggregate-types/{type}/{id}/state': {
    tag: 'reducers',
    summary: "An aggregate's state, computed by its type's reducer",
    responses: { 200: json('the state', 'AggregateState') },
    errors: ['NO_REDUCER_BOUND', 'NOT_FOUND', 'AGGREGATE_ERASED', 'REDUCER_FAILED', 'STATE_TOO_LARGE', 'RUNTIME_UNAVAILABLE'],
  },
  // Projections
  'POST /projections/upload': {
    tag: 'projections',
    summary: 'Upload a projection archive (compiled, then deployed, in the background)',
    body: { contentType: 'multipart/form-data', schema: PROJECTION_UPLOAD_BODY },
    responses: { 202: json('accepted, compiling; poll GET /projections/{uploadId}/status', 'ProjectionUploadAnswer') },
    errors: [...ARCHIVE_ERRORS, 'WEBHOOK_URL_REFUSED', 'QUOTA_EXCEEDED'],
  },
  'GET /projections': {
    tag: 'projections',
    summary: "The tenant's projections",
    responses: { 200: json('every projection with its versions', 'ProjectionList') },
  },
  'GET /projections/{id}/status': {
    tag: 'projections',
    summary: "A projection's status record, by uploadId or stable projectionId",
    parameters: { include: { description: "comma-separated optional sections: 'lag' adds applyLag to each version" } },
    responses: { 200: json('the status record (current and earlier fields together)', 'ProjectionStatus') },
    errors: ['NOT_FOUND'],
  },
  'GET /projections/{id}/state/{key}': {
    tag: 'projections',
    summary: 'The state under a key (URL-encoded)',
    parameters: { minPosition: { description: 'wait (up to PROJECTION_READ_WAIT_MS) until the state reflects this position' } },
    responses: {
      200: json('the state', 'ProjectionState'),
      202: json('the projection is catching up (or has not reached minPosition): read again', 'CatchingUp'),
    },
    errors: ['NOT_FOUND'],
  },
  'GET /projections/{id}/keys': {
    tag: 'projections',
    summary: "The projection's state keys, in key order",
    parameters: { after: { description: "the previous page's next" } },
    responses: { 200: json('a page of keys', 'KeysPage') },
    errors: ['NOT_FOUND'],
  },
  'DELETE /projections/{id}': {
    tag: 'projections',
    summary: 'Delete a projection with its versions, state, notifications and deliveries',
    responses: { 204: noContent('deleted') },
    errors: ['NOT_FOUND'],
  },
  'GET /projections/{id}/lanes': {
    tag: 'projections',
    summary: "The projection's lanes (one per state key), 100 a page",
    parameters: { held: { description: "'true': held lanes only" }, after: { description: 'the last key of the previous page' } },
    responses: { 200: json('a page of lanes', 'LanesPage') },
    errors: ['NOT_FOUND'],
  },
  'POST /projections/{id}/lanes/{key}/retry': {
    tag: 'projections',
    summary: 'Retry the event a held lane stopped on',
    responses: { 200: json('the lane runs again', 'LaneOperationResult') },
    errors: ['NOT_FOUND', 'VALIDATION_FAILED'],
  },
  'POST /projections/{id}/lanes/{key}/skip': {
    tag: 'projections',
    summary: 'Skip the event a held lane stopped on',
    responses: { 200: json('the lane goes on after it', 'LaneOperationResult') },
    errors: ['NOT_FOUND', 'VALIDATION_FAILED'],
  },
  // Notifications
  'GET /projections/{id}/notifications': {
    tag: 'notifications',
    summary: "Poll the projection's state changes after a cursor",
    parameters: PAGE,
    responses: { 200: json('notifications in sequence order', 'NotificationsPage') },
    errors: ['NOT_FOUND', 'CURSOR_EXPIRED'],
  },
  'GET /projections/{id}/stream': {
    tag: 'notifications',
    summary: 'Stream state changes: a WebSocket upgrade, or server-sent events',
    description:
      'With `Upgrade: websocket` (the key in X-API-Key, `?apiKey=` or the subprotocol `apikey.<key>`): 101, then a `state_changed` ' +
      "message (StreamMessage) per notification, `{type: 'ping'}` keepalives to answer with `{type: 'pong'}`. " +
      'Without upgrade and with `Accept: text/event-stream` (projection uploaded with sse true): server-sent events, ' +
      'one `state_changed` event per notification with the StreamMessage as its data and the sequence as its id.',
    parameters: {
      afterSequence: { description: 'resume after this sequence', schema: integer({ minimum: 0 }) },
      'last-event-id': { description: 'SSE: the id of the last event received (a reconnecting EventSource sends it)' },
    },
    responses: {
      101: { description: 'WebSocket: switching protocols; messages are StreamMessage', schema: 'StreamMessage' },
      200: { description: 'server-sent events; each event data is a StreamMessage', contentType: 'text/event-stream', schema: string() },
    },
    errors: ['NOT_FOUND', 'NOT_ACCEPTABLE', 'SSE_DISABLED', 'CURSOR_EXPIRED', 'TOO_MANY_STREAMS'],
  },
  // Webhooks
  'POST /projections/{id}/webhook/rotate': {
    tag: 'webhooks',
    summary: "Rotate the projection's isolated webhook secret",
    responses: { 200: json('the new secret (the old one signs on for WEBHOOK_SECRET_OVERLAP_MS)', 'ProjectionRotated') },
    errors: ['NOT_FOUND', 'WEBHOOK_SECRET_SHARED'],
  },
  'GET /projections/{id}/webhook/deliveries': {
    tag: 'webhooks',
    summary: "The projection's webhook deliveries",
    parameters: { status: { description: 'only these', schema: { enum: ['pending', 'delivered', 'dead'] } }, ...PAGE },
    responses: { 200: json('deliveries in sequence order', 'Deliveries') },
    errors: ['NOT_FOUND'],
  },
  'POST /projections/{id}/webhook/deliveries/replay': {
    tag: 'webhooks',
    summary: 'Replay dead-lettered deliveries: one ({sequence}) or all ({})',
    responses: { 200: json('made pending again', 'Replayed') },
    errors: ['NOT_FOUND', 'WEBHOOK_SUSPENDED', 'NOTIFICATION_EXPIRED'],
  },
  'GET /projections/{id}/webhook': {
    tag: 'webhooks',
    summary: "The webhook endpoint's status: active, or suspended at its pendingDeliveries limit",
    responses: { 200: json('the status', 'WebhookStatus') },
    errors: ['NOT_FOUND'],
  },
  'POST /projections/{id}/webhook/resume': {
    tag: 'webhooks',
    summary: 'Resume a suspended webhook endpoint',
    responses: { 200: json('delivering again', 'Resumed') },
    errors: ['NOT_FOUND', 'WEBHOOK_NOT_SUSPENDED', 'CURSOR_EXPIRED'],
  },
  'POST /webhooks/rotate': {
    tag: 'webhooks',
    summary: "Rotate the tenant's shared webhook secret (every projection without an isolated one)",
    responses: { 200: json('the new secret', 'TenantRotated') },
  },
  // Event webhooks
  'POST /event-webhooks': {
    tag: 'event-webhooks',
    summary: "Subscribe a URL to the tenant's events (filters, from a position)",
    description:
      'Each matching event is POSTed as `{type: "event", …the event}` in position order, signed with the tenant\'s shared secret ' +
      '(Standard Webhooks), retried on WEBHOOK_RETRY_BACKOFF_MS, then dead-lettered. `afterPosition` absent: from the head (later events only).',
    responses: { 201: json("created; `secret` is the tenant's shared webhook secret", 'EventWebhookCreated') },
    errors: ['WEBHOOK_URL_REFUSED', 'QUOTA_EXCEEDED'],
  },
  'GET /event-webhooks': {
    tag: 'event-webhooks',
    summary: "The tenant's event webhooks with their cursor and backlog",
    responses: { 200: json('every event webhook of the tenant', 'EventWebhooks') },
  },
  'GET /event-webhooks/{id}': {
    tag: 'event-webhooks',
    summary: 'An event webhook: active or suspended, delivered position, pending and dead counts, last error',
    responses: { 200: json('the event webhook', 'EventWebhook') },
    errors: ['NOT_FOUND'],
  },
  'DELETE /event-webhooks/{id}': {
    tag: 'event-webhooks',
    summary: 'Delete an event webhook and its dead letters',
    responses: { 204: noContent('deleted') },
    errors: ['NOT_FOUND'],
  },
  'GET /event-webhooks/{id}/deliveries': {
    tag: 'event-webhooks',
    summary: "An event webhook's dead-lettered deliveries",
    parameters: {
      status: { description: 'only `dead` (live deliveries are not kept as rows)', schema: { enum: ['dead'] } },
      afterPosition: { description: 'dead letters after this position', schema: integer({ minimum: 0 }) },
      limit: { description: 'at most this many (default 100, at most 1,000)', schema: integer({ minimum: 1, maximum: 1000 }) },
    },
    responses: { 200: json('dead letters in position order', 'EventWebhookDeliveries') },
    errors: ['NOT_FOUND'],
  },
  'POST /event-webhooks/{id}/replay': {
    tag: 'event-webhooks',
    summary: 'Deliver every matching event again from a position (dead letters from there on are attempted again)',
    responses: { 200: json('the event webhook, its cursor moved back', 'EventWebhook') },
    errors: ['NOT_FOUND', 'WEBHOOK_SUSPENDED'],
  },
  'POST /event-webhooks/{id}/resume': {
    tag: 'event-webhooks',
    summary: 'Resume an event webhook suspended after dead letters in a row, from its cursor',
    responses: { 200: json('active again', 'EventWebhook') },
    errors: ['NOT_FOUND', 'WEBHOOK_NOT_SUSPENDED'],
  },
  // System
  'GET /health': {
    tag: 'system',
    summary: 'The process answers (the contract)',
    responses: { 200: json('ok', 'Health') },
  },
  'GET /health/live': {
    tag: 'system',
    summary: 'Liveness: the process serves (orchestrators restart it otherwise)',
    responses: { 200: json('live', 'Liveness') },
  },
  'GET /health/ready': {
    tag: 'system',
    summary: 'Ready to serve: every readiness check passes',
    responses: { 200: json('ready', 'Readiness'), 503: json('not ready: the failing checks say why', 'Readiness') },
  },
  'GET /metrics': {
    tag: 'system',
    summary: 'Prometheus metrics (text format), families eventstore_… (docs/operations.md)',
    description: 'Public unless METRICS_TOKEN is set; then `Authorization: Bearer <METRICS_TOKEN>`.',
    onlyWhen: 'metrics are on (METRICS_ENABLED, the default)',
    responses: { 200: { description: 'the metrics', contentType: 'text/plain', schema: string() } },
    errors: ['UNAUTHORIZED'],
  },
  'GET /auth/whoami': {
    tag: 'system',
    summary: "The API key's tenant, the key's id and its scopes (any valid key, whatever its scopes)",
    responses: { 200: json('the tenant and the key', 'Whoami') },
  },
  // The tenant's own keys (scope keys:manage)
  'POST /auth/keys': {
    tag: 'keys',
    summary: 'Make an API key of this tenant (never with a scope, or a later expiry, than the calling key has)',
    body: { contentType: 'application/json', schema: 'CreateKeyBody' },
    responses: { 201: json('made; the key is shown once', 'KeyCreated') },
    errors: ['VALIDATION_FAILED', 'MALFORMED_JSON', 'FORBIDDEN', 'QUOTA_EXCEEDED'],
  },
  'GET /auth/keys': {
    tag: 'keys',
    summary: "The tenant's keys not revoked (no secrets)",
    responses: { 200: json('the keys, oldest first', 'Keys') },
  },
  'DELETE /auth/keys/{keyId}': {
    tag: 'keys',
    summary: 'Revoke a key of this tenant (the calling one included)',
    responses: { 204: noContent('revoked') },
    errors: ['NOT_FOUND'],
  },
  'GET /openapi.json': {
    tag: 'system',
    summary: 'This document (OpenAPI 3.1)',
    responses: { 200: json('the document', jsonObjectSchema()) },
  },
  'GET /docs': {
    tag: 'system',
    summary: 'The API reference page (renders this document; no CDN)',
    responses: { 200: { description: 'HTML', contentType: 'text/html', schema: string() } },
  },
  'GET /docs/{asset}': {
    tag: 'system',
    summary: "The reference page's scripts and styles",
    responses: { 200: { description: 'the asset', contentType: '*/*', schema: string() } },
    errors: ['NOT_FOUND'],
  },
  // Admin API
  'POST /admin/tenants': {
    tag: 'admin',
    summary: 'Create a tenant and its first API key',
    body: { contentType: 'application/json', schema: 'CreateTenantBody' },
    responses: { 201: json('created; the key is shown once', 'TenantCreated') },
    errors: ['VALIDATION_FAILED', 'MALFORMED_JSON'],
  },
  'GET /admin/tenants': {
    tag: 'admin',
    summary: 'Every tenant',
    responses: { 200: json('the tenants', 'Tenants') },
  },
  'POST /admin/tenants/{tenantId}/keys': {
    tag: 'admin',
    summary: 'Issue another API key for a tenant, with scopes, a name and an expiry if given (no body: every scope)',
    body: { contentType: 'application/json', schema: 'IssueKeyBody', description: 'optional' },
    responses: { 201: json('issued; shown once', 'IssuedKey') },
    errors: ['NOT_FOUND', 'VALIDATION_FAILED', 'MALFORMED_JSON'],
  },
  'DELETE /admin/tenants/{tenantId}/keys/{keyId}': {
    tag: 'admin',
    summary: 'Revoke an API key',
    responses: { 204: noContent('revoked') },
    errors: ['NOT_FOUND'],
  },
  'GET /admin/tenants/{tenantId}/limits': {
    tag: 'admin',
    summary: "A tenant's quotas: what applies, its overrides, the defaults",
    responses: { 200: json('the limits', 'TenantLimitsView') },
    errors: ['NOT_FOUND'],
  },
  'PUT /admin/tenants/{tenantId}/limits': {
    tag: 'admin',
    summary: "Replace a tenant's overrides ({} goes back to the defaults)",
    body: { contentType: 'application/json', schema: 'LimitOverrides' },
    responses: { 200: json('the limits now', 'TenantLimitsView') },
    errors: ['NOT_FOUND', 'VALIDATION_FAILED', 'MALFORMED_JSON'],
  },
  'GET /admin/tenants/{tenantId}/export': {
    tag: 'admin',
    summary: 'Export a tenant: everything not derived, as NDJSON (docs/operations.md, "Moving a tenant")',
    description:
      'First line a header {format: "eventstore-export", version: 1, tenantId, exportedAt, schemaVersion, store}, then one ' +
      '{table, row} per stored row (every column; times as epoch ms, bytes as base64; event data and metadata as the exact ' +
      'stored text), last a trailer {end: true, rows, counts}. Read from one snapshot of the store. Webhook secrets are not exported.',
    responses: { 200: { description: 'the export, streamed', contentType: 'application/x-ndjson', schema: string() } },
    errors: ['NOT_FOUND'],
  },
  'POST /admin/tenants/import': {
    tag: 'admin',
    summary: 'Recreate a tenant from an export, in one transaction; derived state is rebuilt by the usual catch-up',
    body: {
      contentType: 'application/x-ndjson',
      schema: string(),
      description: 'an export file as GET /admin/tenants/{tenantId}/export wrote it; at most TENANT_IMPORT_MAX_BYTES (4 GiB by default)',
    },
    responses: {
      201: json(
        'imported',
        object({
          tenantId: string(),
          rows: integer(),
          counts: { type: 'object', additionalProperties: integer() },
          suspendedWebhooks: { type: 'array', items: string() },
          webhookSecrets: { const: 'regenerated' },
        }),
      ),
    },
    errors: ['TENANT_EXISTS', 'IMPORT_INVALID', 'IMPORT_TRUNCATED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'],
  },
  'DELETE /admin/tenants/{tenantId}': {
    tag: 'admin',
    summary: 'Remove a tenant and every row it has, derived ones included',
    responses: { 204: noContent('removed') },
    errors: ['NOT_FOUND'],
  },
  'GET /admin/lanes': {
    tag: 'admin',
    summary: "This instance's lane routers and the store's lane rows no projection owns",
    responses: { 200: json('the lanes view', 'AdminLanes') },
  },
};

function jsonObjectSchema(): JsonSchema {
  return { type: 'object' };
}
