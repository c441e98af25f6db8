import type { FastifyReply, FastifyRequest } from 'fastify';
import { bodyDigestOf } from '../common/body-digest';
import { ErrorCode } from '../common/domain-error';
import { AppendContext, RequestIdempotency } from './event-appender';
import { parseIdempotencyKey } from './idempotency-key';
import { AppendOutcomeWithState } from './stateful-append.port';
import { callerTraceContext } from './trace-context';

/** What every append route (POST /events, /events/batch, /events/transaction) says and reads beside its body. */

/** README "Retrying appends safely". */
export const IDEMPOTENCY_KEY = {
  'Idempotency-Key': {
    description:
      '1-255 visible ASCII characters (bare or as a quoted string): a repeat of the same route and body within IDEMPOTENCY_KEYS_KEEP_MS (24 h) stores nothing and answers the first 201 again with Idempotent-Replayed: true; per tenant',
  },
};
export const IDEMPOTENCY_ERRORS: ErrorCode[] = ['INVALID_IDEMPOTENCY_KEY', 'IDEMPOTENCY_KEY_REUSED'];

/** What every append route (one event, a batch, a transaction) may answer besides validation: one list for the three. */
export const APPEND_ERRORS: ErrorCode[] = [
  'VERSION_CONFLICT',
  'APPEND_CONDITION_FAILED',
  'AGGREGATE_TYPE_MISMATCH',
  'AGGREGATE_ERASED',
  'RESERVED_NAME',
  'REDUCER_REJECTED',
  'STATE_TOO_LARGE',
  'RUNTIME_UNAVAILABLE',
  ...IDEMPOTENCY_ERRORS,
];

/** The W3C trace context an append keeps with its events (docs/notifications.md, Trace context). */
export const TRACE_CONTEXT_HEADERS = {
  traceparent: {
    description:
      'W3C traceparent: kept with each event and passed on to its notifications, streams and webhooks; an invalid one is ignored',
  },
  tracestate: { description: 'W3C tracestate: kept with a valid traceparent (≤ 512 characters, ≤ 32 members), else dropped' },
};

/** The request's Idempotency-Key (with the digest of its route and body, as the body parser recorded it) and the caller's trace context. */
export function appendContextOf(req: FastifyRequest, key?: string, traceparent?: string, tracestate?: string): AppendContext {
  return { idempotency: idempotencyOf(key, req), trace: callerTraceContext(traceparent, tracestate) };
}

function idempotencyOf(header: string | undefined, req: FastifyRequest): RequestIdempotency | undefined {
  const key = parseIdempotencyKey(header);
  return key === undefined ? undefined : { key, requestHash: bodyDigestOf(req) ?? '' };
}

/** A replay is the first answer again, marked as such (Idempotent-Replayed, as Stripe and the draft's examples do). */
export function replayMarked<T extends AppendOutcomeWithState | AppendOutcomeWithState[]>(reply: FastifyReply, outcome: T): T {
  const replayed = Array.isArray(outcome) ? outcome.some((o) => o.replayed) : outcome.replayed;
  if (replayed) void reply.header('Idempotent-Replayed', 'true');
  return outcome;
}
