import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../common/domain-error';
import { errorHeaders, statusOf, toErrorBody } from '../common/error-http-mapping';
import { RateLimitState, rateLimitHeaders } from '../common/rate-limit-fields';
import { routeOptionsOf } from '../common/route-options';
import { LIMITS } from '../common/event-limits';
import { TenantRequest } from '../tenancy/current-tenant.decorator';
import { TenantQuotas } from './tenant-quotas';

/** A body up to this size refused before it was read is drained so the connection stays open; a larger one closes it. */
const DRAIN_REFUSED_BODY_BYTES = 64 * 1024;

type QuotaRequest = FastifyRequest & TenantRequest & { quotaStates?: RateLimitState[] };

/**
 * Where the HTTP edge meets the quotas, in Fastify's hooks so that refusals cost as little as
 * possible. Routes opt in with their route options (`@Quota(...)`):
 *  - onRequest, right after authentication and before the body is read: an append request or an
 *    upload counts one against its rate;
 *  - preHandler, once an append's body is parsed and before anything is stored: its events count
 *    against the events rate and the stored-events cap.
 * Every append answer, accepted or refused, carries the RateLimit fields of the policies it met.
 *
 * A rate refusal is answered after `refusalDelayMs` (never later than its Retry-After): a client
 * that keeps sending past its quota then sends one request per connection per pause instead of
 * thousands a second, so its refusals cost the service, and the tenants sharing it, next to nothing.
 * A client that honours Retry-After loses nothing by it.
 */
export class QuotaGate {
  constructor(
    private readonly quotas: TenantQuotas,
    private readonly refusalDelayMs: number,
  ) {}

  install(fastify: FastifyInstance): void {
    fastify.addHook('onRequest', async (req: QuotaRequest, reply) => {
      const quota = routeOptionsOf(req).quota;
      if (!quota || !req.tenant) return;
      try {
        const state =
          quota === 'upload'
            ? await this.quotas.admitUpload(req.tenant.tenantId)
            : await this.quotas.admitAppendRequest(req.tenant.tenantId);
        if (state) {
          req.quotaStates = [state];
          reply.headers(rateLimitHeaders(req.quotaStates));
        }
      } catch (e) {
        if (!(e instanceof DomainError)) throw e;
        await this.pause(e);
        return refuseBeforeBody(req, reply, e);
      }
    });
    fastify.addHook('preHandler', async (req: QuotaRequest, reply) => {
      const quota = routeOptionsOf(req).quota;
      if ((quota !== 'append' && quota !== 'append-batch') || !req.tenant) return;
      const n = quota === 'append' ? 1 : batchSize(req.body);
      // A batch that validation will refuse (no events, too many) stores nothing and counts none.
      if (n === 0) return;
      const states = req.quotaStates ?? [];
      try {
        const state = await this.quotas.admitAppendEvents(req.tenant.tenantId, n);
        if (state) reply.headers(rateLimitHeaders([...states, state]));
      } catch (e) {
        if (!(e instanceof DomainError)) throw e;
        await this.pause(e);
        const refused = rateLimitHeaders(states);
        return reply
          .code(statusOf(e.code))
          .headers({ ...refused, ...mergeFields(refused, errorHeaders(e)) })
          .send(toErrorBody(e));
      }
    });
  }

  private pause(err: DomainError): Promise<void> | undefined {
    const retryAfterS = err.details.retryAfterSeconds;
    if (err.code !== 'RATE_LIMITED' || this.refusalDelayMs === 0 || typeof retryAfterS !== 'number') return undefined;
    return new Promise((resolve) => setTimeout(resolve, Math.min(this.refusalDelayMs, retryAfterS * 1000)));
  }
}

function batchSize(body: unknown): number {
  const events = (body as { events?: unknown } | null)?.events;
  return Array.isArray(events) && events.length <= LIMITS.eventsPerBatch ? events.length : 0;
}

/** The refused policy's fields joined after those of the policies the request passed (one list per field). */
function mergeFields(passed: Record<string, string>, refusal: Record<string, string>): Record<string, string> {
  const out = { ...refusal };
  for (const name of ['ratelimit-policy', 'ratelimit']) {
    if (passed[name] && refusal[name]) out[name] = `${passed[name]}, ${refusal[name]}`;
  }
  return out;
}

/**
 * Answered before the body is read. A small body is left for Node to drain, so a client that
 * keeps going over its quota keeps its connection rather than paying a new one per refusal; a
 * large or chunked one closes the connection instead of being read (the body deadline still
 * bounds how long a trickling body may take).
 */
function refuseBeforeBody(req: FastifyRequest, reply: FastifyReply, err: DomainError): FastifyReply {
  const length = req.headers['content-length'];
  if (req.headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) > DRAIN_REFUSED_BODY_BYTES)) {
    reply.header('connection', 'close');
  }
  return reply.code(statusOf(err.code)).headers(errorHeaders(err)).send(toErrorBody(err));
}
