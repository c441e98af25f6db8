import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from './domain-error';
import { statusOf, toErrorBody } from './error-http-mapping';
import { isLingering } from './refused-body-linger';

/**
 * A request's body must have fully arrived within `ms` of its headers. Past that it is answered
 * 408 REQUEST_TIMEOUT in the service's error format and its connection closed, so a client that
 * announces 4 MB and trickles it holds nothing for long. A request already answered (refused
 * before its body was read) whose body is still trickling has its socket destroyed, unless it is
 * closing with its own bounds (refused-body-linger.ts).
 */
const expired = new WeakSet<IncomingMessage>();

/**
 * Whether this request's body passed its deadline: whatever error its reader then raised (a
 * multipart parser's "premature close"), the answer is REQUEST_TIMEOUT.
 */
export function bodyTimedOut(raw: IncomingMessage | undefined): boolean {
  return raw !== undefined && expired.has(raw);
}

export function installBodyDeadline(fastify: FastifyInstance, ms: number): void {
  fastify.addHook('onRequest', (req, reply, done) => {
    const { headers } = req;
    if (headers['transfer-encoding'] === undefined && (headers['content-length'] === undefined || headers['content-length'] === '0'))
      return done();
    // Nothing on the socket: a keep-alive socket would collect one listener per request. A timer
    // that outlives its socket finds it destroyed and does nothing. It looks again after the next
    // poll phase: on a loaded event loop the timer can fire before a body that did arrive in time
    // was read off the socket, and such a client must not be cut (nor reset, its bytes unread).
    const timer = setTimeout(() => setImmediate(() => expire(req, reply, ms)), ms).unref();
    req.raw.once('end', () => clearTimeout(timer));
    done();
  });
}

function expire(req: FastifyRequest, reply: FastifyReply, ms: number): void {
  const raw = req.raw;
  if (raw.complete || raw.socket?.destroyed) return;
  if (reply.sent) {
    // Answered before its body was read and closing: the linger's own bounds end it.
    if (!isLingering(raw.socket)) raw.socket?.destroy();
    return;
  }
  expired.add(raw);
  // The answer says `Connection: close`: the socket goes after it, once what the client is still
  // sending has been read and thrown away for a bounded time (refused-body-linger.ts), not before
  // the client could read the answer.
  const err = Object.assign(new DomainError('REQUEST_TIMEOUT', `the request body did not fully arrive within ${ms} ms`), {
    statusCode: 408,
  });
  if (raw.listenerCount('data') > 0 && raw.listenerCount('error') > 0) {
    // Fastify's body parser is reading it: failing its stream goes the way of every body error
    // (the error filter answers, with Connection: close), and the parser does not answer twice.
    raw.emit('error', err);
  } else {
    void reply.code(statusOf(err.code)).header('connection', 'close').send(toErrorBody(err));
  }
}
