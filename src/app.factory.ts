import { NestFactory } from '@nestjs/core';
import multipart from '@fastify/multipart';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import { installBodyDeadline } from './common/body-deadline';
import { answerClientError } from './common/client-error';
import { answerRouterError, installRequestTargetCheck } from './common/url-params';
import { ROUTER_MAX_PARAM_LENGTH } from './common/url-limits';
import { ErrorFilter } from './common/error.filter';
import { installExactJson } from './common/exact-json-http';
import { installLeanAsyncBind } from './common/lean-async-bind';
import { RedactingLogger } from './common/redacting-logger';
import { installRequestIdHeader, requestIdOf, ServiceLogController, serviceLoggerOptions } from './common/service-log';
import { RequestDrain } from './common/request-drain';
import { installRefusedBodyLinger } from './common/refused-body-linger';
import { AppConfig } from './config/app-config';
import { LIMITS } from './common/event-limits';
import { installRequestTracing } from './observability/tracing/request-tracing';
import { tracingOn } from './observability/tracing/tracing';
import { DEFAULT_ARCHIVE_LIMITS } from './tenant-code/compiler/archive-reader';
import { mountBullBoard } from './lanes/bull-board';
import { AppMetrics } from './observability/metrics/app-metrics';
import { AppendTurns, installAppendTurns } from './events/append-turns';
import { installHttpMetrics } from './observability/metrics/http-metrics';
import { LaneScheduler } from './lanes/lane-scheduler.port';
import { QuotaGate } from './quotas/quota-gate';
import { adminTokenMatches } from './tenancy/admin.guard';
import { RequestAuth } from './tenancy/request-auth';
import { TenantDirectory } from './tenancy/tenant-directory';

/** Builds the whole service (not listening yet); main.ts and the e2e tests share it. */
export interface ServiceApp {
  app: NestFastifyApplication;
  drain: RequestDrain;
}

export async function createApp(config: AppConfig): Promise<ServiceApp> {
  const { requestTimeoutMs, connectionTimeoutMs, headersTimeoutMs, bodyReadTimeoutMs } = config.http;
  // Fastify binds a callback per request with a body; Node 20's bind costs ~5 % of an append (see the file).
  installLeanAsyncBind();
  const adapter = new FastifyAdapter({
    bodyLimit: LIMITS.bodyBytes,
    logger: serviceLoggerOptions(config.logLevel, config.logFormat),
    // One line per request of our own; at trace also Fastify's two, with the URL (redacted), for debugging.
    logController: new ServiceLogController(config.logLevel === 'trace'),
    genReqId: requestIdOf,
    // Keep-alive sockets idle at shutdown are closed so close() does not wait on them.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    // Node's own deadlines: a whole request (bare 408), a silent socket. Streams are exempt once
    // open: a WebSocket leaves the HTTP parser at the upgrade and ws clears its socket timeout; an
    // SSE request is complete at its headers, and SseStream clears the socket timeout.
    requestTimeout: requestTimeoutMs,
    connectionTimeout: connectionTimeoutMs,
    // Node checks headers and request deadlines every connectionsCheckingInterval (30 s by default).
    http: { headersTimeout: headersTimeoutMs, requestTimeout: requestTimeoutMs, connectionsCheckingInterval: 1000 },
    clientErrorHandler: answerClientError,
    // Path parameters up to a state key's limit (1,024 bytes of UTF-8, even fully percent-encoded);
    // the router's refusals (too long, not UTF-8) in the service's error format, before any hook.
    routerOptions: { maxParamLength: ROUTER_MAX_PARAM_LENGTH },
    frameworkErrors: answerRouterError,
  });
  const fastify = adapter.getInstance();
  // First, so a request's span covers every later hook (nothing is installed when tracing is off).
  if (tracingOn()) installRequestTracing(fastify);
  // Next, so that a request refused by any later hook still says its id.
  installRequestIdHeader(fastify);
  // Only JSON is accepted as a body: anything else is 415, not a string the handlers must reject.
  fastify.removeContentTypeParser(['text/plain']);
  installExactJson(fastify);
  const drain = new RequestDrain();
  drain.install(fastify);
  // A refusal sent before its body was read still reaches a client that is sending it (issue 25 item 6).
  installRefusedBodyLinger(fastify.server, config.http.refusedBodyLinger);

  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), adapter, {
    // Nest's logs through the same logger (its level decides), so that every line is one JSON object.
    logger: new RedactingLogger(fastify.log),
    abortOnError: false,
    // Fastify's own JSON parser only: Nest would add form-urlencoded, which no endpoint accepts (415).
    bodyParser: false,
  });
  // Also receives Fastify's body-parsing errors, which Nest routes through the filters.
  app.useGlobalFilters(new ErrorFilter());
  // Every response by route template, method and status (refusals of the hooks below included).
  installHttpMetrics(fastify, app.get(AppMetrics));
  // Both run in onRequest, before any body is read: a body's deadline starts with its headers, and
  // a request without valid credentials is answered without reading its body at all.
  installBodyDeadline(fastify, bodyReadTimeoutMs);
  // Before authentication: a malformed target (NUL, not UTF-8, a parameter over its limit) is
  // answered the same whoever sends it, and no handler or store ever sees one.
  installRequestTargetCheck(fastify);
  new RequestAuth(app.get(TenantDirectory), config.adminToken).install(fastify);
  // After authentication (it counts by the tenant) and, for appends and uploads, still before the body.
  app.get(QuotaGate).install(fastify);
  // After the quotas: a tenant's appends past its turns wait here, before their bodies are read.
  installAppendTurns(fastify, new AppendTurns(config.appendTurns), config.appendTurns);
  // Uploads: one archive per request, capped at the archive limit while it streams in.
  await app.register(multipart as any, {
    limits: { fileSize: DEFAULT_ARCHIVE_LIMITS.maxArchiveBytes, files: 1, fields: 10, fieldSize: 64 * 1024, parts: 12 },
  });
  // Operators' view of the lane queues (BullMQ only), behind the admin token like the admin API.
  const queue = app.get(LaneScheduler, { strict: false }).boardAdapter?.();
  if (queue && config.adminToken) {
    const token = config.adminToken;
    await mountBullBoard(fastify, [queue], '/admin/queues', (req) => adminTokenMatches(req.headers.authorization, token));
  }
  return { app, drain };
}
