import { LogLevel as NestLogLevel } from '@nestjs/common';
import type { FastifyServerOptions } from 'fastify';
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
import { redactSecrets, redactUrl } from './common/redact';
import { RedactingLogger } from './common/redacting-logger';
import { RequestDrain } from './common/request-drain';
import { AppConfig, LogLevel } from './config/app-config';
import { LIMITS } from './events/event-limits';
import { DEFAULT_ARCHIVE_LIMITS } from './runtime/archive-reader';
import { mountBullBoard } from './lanes/bull-board';
import { AppMetrics } from './observability/metrics/app-metrics';
import { installHttpMetrics } from './observability/metrics/http-metrics';
import { LaneScheduler } from './lanes/lane-scheduler.port';
import { LANE_SCHEDULER } from './lanes/lanes.module';
import { QuotaGate } from './quotas/quota-gate';
import { adminTokenMatches } from './tenancy/admin.guard';
import { RequestAuth } from './tenancy/request-auth';
import { TenantDirectory } from './tenancy/tenant-directory';

const NEST_LEVELS: Record<LogLevel, NestLogLevel[]> = {
  silent: [],
  fatal: ['fatal'],
  error: ['fatal', 'error'],
  warn: ['fatal', 'error', 'warn'],
  info: ['fatal', 'error', 'warn', 'log'],
  debug: ['fatal', 'error', 'warn', 'log', 'debug'],
  trace: ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'],
};

/** Builds the whole service (not listening yet); main.ts and the e2e tests share it. */
export interface ServiceApp {
  app: NestFastifyApplication;
  drain: RequestDrain;
}

/**
 * Per-request logging costs a large share of an append's CPU, so Fastify logs only at trace (errors
 * are logged by ErrorFilter). Whatever it or a plugin logs (URLs, multipart's header dumps) passes
 * through redactSecrets on its way out; the request serializer drops the key from the URL first.
 */
function fastifyLogger(level: LogLevel): FastifyServerOptions['logger'] {
  if (level !== 'trace') return false;
  return {
    level: 'trace',
    serializers: {
      req: (req: { method?: string; url?: string; host?: string; ip?: string }) => ({
        method: req.method,
        url: redactUrl(req.url),
        host: req.host,
        remoteAddress: req.ip,
      }),
      // Never a parse error's rawPacket (the request's bytes, headers and all).
      err: (e: Error & { code?: string }) => ({
        type: e?.name,
        code: e?.code,
        message: redactSecrets(String(e?.message)),
        stack: redactSecrets(String(e?.stack)),
      }),
    },
    redact: {
      paths: [
        'req.headers["x-api-key"]',
        'req.headers.authorization',
        '*.headers["x-api-key"]',
        '*.headers.authorization',
        '*.headers["sec-websocket-protocol"]',
      ],
      censor: '[REDACTED]',
    },
    stream: { write: (line: string) => process.stdout.write(redactSecrets(line)) },
  };
}

export async function createApp(config: AppConfig): Promise<ServiceApp> {
  const { requestTimeoutMs, connectionTimeoutMs, headersTimeoutMs, bodyReadTimeoutMs } = config.http;
  const adapter = new FastifyAdapter({
    bodyLimit: LIMITS.bodyBytes,
    logger: fastifyLogger(config.logLevel),
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
  // Only JSON is accepted as a body: anything else is 415, not a string the handlers must reject.
  fastify.removeContentTypeParser(['text/plain']);
  installExactJson(fastify);
  const drain = new RequestDrain();
  drain.install(fastify);

  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), adapter, {
    logger: new RedactingLogger({ logLevels: NEST_LEVELS[config.logLevel] }),
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
  // Uploads: one archive per request, capped at the archive limit while it streams in.
  await app.register(multipart as any, {
    limits: { fileSize: DEFAULT_ARCHIVE_LIMITS.maxArchiveBytes, files: 1, fields: 10, fieldSize: 64 * 1024, parts: 12 },
  });
  // Operators' view of the lane queues (BullMQ only), behind the admin token like the admin API.
  const queue = app.get<LaneScheduler>(LANE_SCHEDULER, { strict: false }).boardAdapter?.();
  if (queue && config.adminToken) {
    const token = config.adminToken;
    await mountBullBoard(fastify, [queue], '/admin/queues', (req) => adminTokenMatches(req.headers.authorization, token));
  }
  return { app, drain };
}
