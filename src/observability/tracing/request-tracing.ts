import { context, propagation, ROOT_CONTEXT, Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from '@opentelemetry/semantic-conventions';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { TRACER_NAME } from './tracing-setup';

const SPAN = Symbol('requestSpan');
type TracedRequest = FastifyRequest & { [SPAN]?: Span };

/**
 * A SERVER span per HTTP request, named `METHOD route-template` (`POST /events`), continuing a
 * W3C `traceparent` sent with it. Installed only when tracing is on (app.factory.ts).
 *
 * The span opens at onRequest (it covers authentication, quotas and the body) and is made the
 * active context from preHandler on: Fastify reads the body on the socket's events, which carry no
 * context of ours, but calls the handler (Nest: guards, pipes, the controller) synchronously from
 * the last preHandler hook, so everything the handler starts runs inside the span. It ends when the
 * response closes, whatever answered it (a hook, the handler, a taken-over SSE stream, a reset).
 */
export function installRequestTracing(fastify: FastifyInstance): void {
  const tracer = trace.getTracer(TRACER_NAME);
  fastify.addHook('onRequest', (req: TracedRequest, reply, done) => {
    const route = req.routeOptions.url;
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const path = req.url.split('?', 1)[0];
    const span = tracer.startSpan(
      route ? `${req.method} ${route}` : req.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: req.method,
          [ATTR_URL_PATH]: path,
          [ATTR_URL_SCHEME]: req.protocol,
          [ATTR_CLIENT_ADDRESS]: req.ip,
          ...(route ? { [ATTR_HTTP_ROUTE]: route } : {}),
          ...(req.headers['user-agent'] ? { [ATTR_USER_AGENT_ORIGINAL]: req.headers['user-agent'] } : {}),
        },
      },
      parent,
    );
    req[SPAN] = span;
    reply.raw.once('close', () => {
      const status = reply.raw.statusCode;
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      // Server spans: only a 5xx is the server's error (OpenTelemetry's HTTP conventions).
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    done();
  });
  fastify.addHook('preHandler', (req: TracedRequest, _reply, done) => {
    const span = req[SPAN];
    if (!span) return done();
    context.with(trace.setSpan(context.active(), span), done);
  });
}
