import type { ServerResponse } from 'node:http';
import { DomainError, ErrorCode } from './domain-error';
import { rateLimitHeaders, rateLimitStateOf } from './rate-limit-fields';
import { MAX_PATH_PARAM_BYTES } from './url-limits';

/** Exhaustive: adding a code without a status is a compile error. */
const STATUS_BY_CODE: Record<ErrorCode, number> = {
  VALIDATION_FAILED: 400,
  MALFORMED_JSON: 400,
  UNAUTHORIZED: 401,
  ADMIN_DISABLED: 403,
  // A valid API key without the scope the route needs: the body names it (`missingScope`, src/tenancy/scope-check.ts).
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  VERSION_CONFLICT: 409,
  // An append's condition (DCB) found a matching event after its position: re-read, decide again, retry.
  APPEND_CONDITION_FAILED: 409,
  AGGREGATE_TYPE_MISMATCH: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INVALID_ARCHIVE: 400,
  ARCHIVE_TOO_LARGE: 413,
  ALREADY_EXISTS: 409,
  NO_REDUCER_BOUND: 404,
  REDUCER_NOT_COMPILED: 409,
  NO_MATCHING_REDUCER: 400,
  REDUCER_FAILED: 422,
  // The reducer threw on an event of the append (it guards an invariant): nothing was stored.
  REDUCER_REJECTED: 422,
  // The reducer's state went over STATE_MAX_BYTES: held like REDUCER_FAILED, refused by the host before it was written.
  STATE_TOO_LARGE: 422,
  // Internal: the append path recomputes and retries; seen by a client only if that keeps failing.
  STATE_STALE: 409,
  RUNTIME_UNAVAILABLE: 503,
  SERVICE_UNAVAILABLE: 503,
  // Notifications after the cursor were removed by retention: the body names the oldest one kept.
  CURSOR_EXPIRED: 410,
  // Rotation asked of a projection on the tenant's shared secret: POST /webhooks/rotate is the way.
  WEBHOOK_SECRET_SHARED: 400,
  WEBHOOK_URL_REFUSED: 400,
  SSE_DISABLED: 409,
  NOT_ACCEPTABLE: 406,
  // The body did not arrive within BODY_READ_TIMEOUT_MS; the connection is closed after the answer.
  REQUEST_TIMEOUT: 408,
  // Over STREAM_MAX_PER_KEY or STREAM_MAX_PER_INSTANCE open streams (`limit`, `scope`); comes with Retry-After.
  TOO_MANY_STREAMS: 429,
  // The tenant's uploads still waiting to compile are at the cap: answered with Retry-After.
  TOO_MANY_PENDING_UPLOADS: 429,
  // Over a tenant's rate quota (appends, events, uploads): Retry-After and the RateLimit fields.
  RATE_LIMITED: 429,
  // Over a quota that waiting does not free (stored events): no Retry-After.
  QUOTA_EXCEEDED: 403,
  // A path parameter over MAX_PATH_PARAM_BYTES once decoded (or past the router's own cap): `field`, `limit`.
  URI_TOO_LONG: 414,
  // A replay asked of a webhook endpoint suspended at its pendingDeliveries limit: resume it first.
  WEBHOOK_SUSPENDED: 409,
  // A resume asked of a webhook endpoint that is not suspended.
  WEBHOOK_NOT_SUSPENDED: 409,
  // A replay of a delivery whose notification retention has removed (`sequence`, `oldestSequence`).
  NOTIFICATION_EXPIRED: 410,
  // An Idempotency-Key header that is not 1 to 255 visible ASCII characters (README "Retrying appends safely").
  INVALID_IDEMPOTENCY_KEY: 400,
  // The key was used by the tenant, within its retention, for another route or body (`idempotencyKey`).
  IDEMPOTENCY_KEY_REUSED: 422,
  // The tenant has a dry run running on this instance (`dryRunId`): one at a time per tenant.
  DRY_RUN_RUNNING: 409,
  // An import of a tenant whose id (or one of whose key hashes) the store already holds: nothing imported.
  TENANT_EXISTS: 409,
  // An import file that is not an export of this format (header, a line, a table or column, a tenant id, the schema): `line`.
  IMPORT_INVALID: 400,
  // An import file without its trailer, or whose counts differ from the lines read: cut short; nothing imported.
  IMPORT_TRUNCATED: 400,
  // The aggregate was erased: its state read and any further append (README "Erasure").
  AGGREGATE_ERASED: 410,
  // An aggregate or event type starting with '$' (the service's own events: $system, $erased).
  RESERVED_NAME: 400,
  // A minPosition read on a key whose lane is held at or before that position: answered at once, naming the held event
  // (waiting could not help until the lane is retried or skipped).
  PROJECTION_LANE_HELD: 409,
  INTERNAL: 500,
};

export interface ErrorBody {
  error: ErrorCode;
  message: string;
  [extra: string]: unknown;
}

export function statusOf(code: ErrorCode): number {
  return STATUS_BY_CODE[code];
}

export function toErrorBody(err: DomainError): ErrorBody {
  return { error: err.code, message: err.message, ...err.details };
}

/** Seconds a client over a stream cap is asked to wait (streams free up as clients leave; there is no better estimate). */
export const STREAM_RETRY_AFTER_S = 5;

/**
 * Headers that go with an error's answer, wherever it is written (filter, upgrade refusal, SSE):
 * `Retry-After` when the error says when to try again (`retryAfterSeconds`, or the stream caps' fixed hint),
 * with the `RateLimit-Policy`/`RateLimit` fields when it is a quota's refusal (its details name the policy),
 * `Connection: close` when the rest of the request may still be on its way.
 */
export function errorHeaders(err: DomainError): Record<string, string> {
  const quota = rateLimitStateOf(err.details);
  const s = err.details.retryAfterSeconds;
  if (typeof s === 'number' && Number.isFinite(s) && s > 0) {
    return { 'retry-after': String(Math.ceil(s)), ...(quota ? rateLimitHeaders([quota]) : {}) };
  }
  switch (err.code) {
    case 'TOO_MANY_STREAMS':
      return {
        'retry-after': String(STREAM_RETRY_AFTER_S),
        ...(quota ? rateLimitHeaders([{ ...quota, resetSeconds: STREAM_RETRY_AFTER_S }]) : {}),
      };
    case 'REQUEST_TIMEOUT':
      return { connection: 'close' };
    default:
      return {};
  }
}

/**
 * The error's answer on a raw response (a route that took its reply over, such as a server-sent
 * events stream refused before it started): the same status, headers and body as the filter's.
 * Once the head is out only the body can still be written.
 */
export function writeErrorAnswer(res: ServerResponse, err: DomainError): void {
  if (!res.headersSent) res.writeHead(statusOf(err.code), { 'content-type': 'application/json', ...errorHeaders(err) });
  res.end(JSON.stringify(toErrorBody(err)));
}

/**
 * Fastify raises its own errors before a Nest handler runs (body parsing, size, media type).
 * They become domain errors here so that every 4xx carries a stable code.
 */
export function fromFrameworkError(err: unknown): DomainError {
  if (err instanceof DomainError) return err;
  const e = err as { code?: string; statusCode?: number; status?: number; message?: string; name?: string };
  switch (e?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new DomainError('PAYLOAD_TOO_LARGE', 'request body is larger than the limit');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new DomainError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new DomainError('MALFORMED_JSON', 'request body is not valid JSON');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new DomainError('VALIDATION_FAILED', 'Content-Length does not match the body');
    // The router's own refusals (Fastify's frameworkErrors), before any hook: the same answers as
    // requestTargetProblem gives for what gets past the router.
    case 'FST_ERR_BAD_URL':
      return new DomainError('VALIDATION_FAILED', 'path: is not valid percent-encoded UTF-8', { field: 'path' });
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new DomainError('URI_TOO_LONG', `a path parameter is at most ${MAX_PATH_PARAM_BYTES} bytes of UTF-8 once decoded`, {
        field: 'path',
        limit: MAX_PATH_PARAM_BYTES,
      });
  }
  if (e instanceof SyntaxError) return new DomainError('MALFORMED_JSON', 'request body is not valid JSON');
  // Nest re-throws Fastify's parser errors as HttpException(message, status), dropping the code.
  const status = e?.statusCode ?? e?.status ?? (typeof (e as any)?.getStatus === 'function' ? (e as any).getStatus() : 0);
  if (status === 404) return new DomainError('NOT_FOUND', 'route not found');
  // Our body deadline fails the body parser's stream; Nest hands it on as an HttpException(408).
  if (status === 408) return new DomainError('REQUEST_TIMEOUT', 'the request body did not fully arrive in time');
  if (status === 413) return new DomainError('PAYLOAD_TOO_LARGE', 'request body is larger than the limit');
  if (status === 415) return new DomainError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json');
  if (status === 400 && /JSON/.test(e?.message ?? '')) return new DomainError('MALFORMED_JSON', 'request body is not valid JSON');
  if (status === 401) return new DomainError('UNAUTHORIZED', 'missing or invalid credentials');
  if (status >= 400 && status < 500) return new DomainError('VALIDATION_FAILED', e?.message ?? 'bad request');
  return new DomainError('INTERNAL', 'internal error');
}
