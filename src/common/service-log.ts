import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions, LogController } from 'fastify';
import { prettyLogLine } from './pretty-log-line';
import { redactSecrets, redactUrl } from './redact';

/**
 * The service's one logger: Fastify's pino, its lines on stdout. JSON by default, one object per
 * line (`level` as a word, `time` in ISO 8601, `msg`), for log collectors; LOG_FORMAT=pretty turns
 * each into a readable line. Every line passes through redactSecrets on its way out, whoever wrote
 * it (our request lines, Nest's logs through RedactingLogger, Fastify, a plugin's header dump at
 * trace), and the serializers never put a request's body, query string or headers into a line.
 */
export function serviceLoggerOptions(
  level: string,
  format: 'json' | 'pretty',
  out: (text: string) => void = bufferedStdout(),
): FastifyServerOptions['logger'] {
  const write =
    format === 'pretty' ? (line: string) => out(prettyLogLine(redactSecrets(line))) : (line: string) => out(redactSecrets(line));
  return {
    level,
    timestamp: () => `,"time":"${new Date().toISOString()}"`,
    formatters: { level: (label: string) => ({ level: label }) },
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
    stream: { write },
  };
}

/**
 * Lines written during one turn of the event loop go to stdout in one write at its end: a write(2)
 * per request line would cost about as much as the line itself (bench/request-log.bench.ts).
 * Whatever is pending is written when the process exits (process.exit, a crash); only a SIGKILL
 * loses the current turn's lines.
 */
export function tickBufferedStdout(write: (text: string) => void = (t) => void process.stdout.write(t)): (text: string) => void {
  let pending: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const text = pending.length === 1 ? pending[0] : pending.join('');
    pending = [];
    write(text);
  };
  process.on('exit', flush);
  return (text) => {
    pending.push(text);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
}

let stdoutLines: ((text: string) => void) | undefined;

/** The one buffer of the process's stdout (several apps in one process, as in tests, share it). */
function bufferedStdout(): (text: string) => void {
  return (stdoutLines ??= tickBufferedStdout());
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * A request's id in its log lines and its `X-Request-Id` answer header: the caller's own
 * `X-Request-Id` when it is a plain token of at most 128 characters (so a trace can be followed
 * across services), else a random one.
 */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/** Levels at which the request line is not written. */
const ABOVE_INFO = new Set(['warn', 'error', 'fatal', 'silent']);

/**
 * One line per request when it has been answered: request id, method, route as a template
 * (`/events/:aggregateId`, never the URL with its ids and query), status, duration, and the tenant
 * when the request authenticated (only its id: the key that named it is never kept on the request);
 * at `error` level with the error when the response itself failed (a stream cut), else at `info`
 * whatever the status (a handler's error is logged once, where it is handled: ErrorFilter).
 * Fastify's own two lines per request (with the URL, redacted) and its "route not found" (with the
 * URL) come only at `trace`.
 */
export class ServiceLogController extends LogController {
  constructor(private readonly fastifyLines: boolean) {
    super({ disableRequestLogging: false });
  }

  override incomingRequest(request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    if (this.fastifyLines) super.incomingRequest(request, reply, metadata);
  }

  override routeNotFound(request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    if (this.fastifyLines) super.routeNotFound(request, reply, metadata);
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
    metadata?: Record<string, unknown>,
  ): void {
    if (this.fastifyLines) super.requestCompleted(error, request, reply, metadata);
    // At warn and above nothing is built for the line at all.
    if (!error && ABOVE_INFO.has(request.log.level)) return;
    const line = {
      tenantId: (request as { tenant?: { tenantId: string } }).tenant?.tenantId,
      method: request.method,
      route: request.routeOptions.url ?? null,
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 10) / 10,
    };
    if (error) request.log.error({ ...line, err: error }, 'request');
    else request.log.info(line, 'request');
  }
}

/** Every answer says its request's id (`X-Request-Id`), so that a caller can find its line. */
export function installRequestIdHeader(fastify: FastifyInstance): void {
  // A callback hook: no promise per request on the append path.
  fastify.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
}
