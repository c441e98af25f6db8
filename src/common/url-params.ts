import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, validationFailed } from './domain-error';
import { fromFrameworkError, statusOf, toErrorBody } from './error-http-mapping';
import { MAX_PATH_PARAM_BYTES } from './url-limits';
import { announcesBody } from './announces-body';

const NUL = '\u0000';

/** A parameter's text decoded as URI component, or null when it is not valid percent-encoded UTF-8. */
function decoded(text: string, plusIsSpace: boolean): string | null {
  const t = plusIsSpace ? text.replace(/\+/g, ' ') : text;
  if (!t.includes('%')) return t;
  try {
    // Throws on a malformed escape (`%zz`), on bytes that are not UTF-8 (`%C3%28`) and on encoded
    // surrogates (`%ED%A0%80`): what no store could keep as the text it was sent as.
    return decodeURIComponent(t);
  } catch {
    return null;
  }
}

function tooLong(bytes: number): DomainError {
  return new DomainError(
    'URI_TOO_LONG',
    `a path parameter is at most ${MAX_PATH_PARAM_BYTES} bytes of UTF-8 once decoded (this one is ${bytes})`,
    {
      field: 'path',
      limit: MAX_PATH_PARAM_BYTES,
    },
  );
}

/**
 * Why a request target cannot be served, or null. One rule for every route and every store, checked
 * on the raw target before anything reads a parameter: every path segment and every query name and
 * value must be valid percent-encoded UTF-8 without NUL (PostgreSQL text refuses NUL; SQLite and
 * Node would keep or mangle it), and no path segment may decode to more than MAX_PATH_PARAM_BYTES.
 */
export function requestTargetProblem(rawUrl: string): DomainError | null {
  const q = rawUrl.indexOf('?');
  const path = q === -1 ? rawUrl : rawUrl.slice(0, q);
  const query = q === -1 ? '' : rawUrl.slice(q + 1);
  // The common case (no escapes, a short path) costs one scan of the path.
  if (path.length > MAX_PATH_PARAM_BYTES || path.includes('%')) {
    for (const segment of path.split('/')) {
      const text = decoded(segment, false);
      if (text === null) return validationFailed('path', 'is not valid percent-encoded UTF-8');
      if (text.includes(NUL)) return validationFailed('path', 'must not contain NUL (%00)');
      const bytes = text.length > MAX_PATH_PARAM_BYTES / 3 ? Buffer.byteLength(text, 'utf8') : text.length;
      if (bytes > MAX_PATH_PARAM_BYTES) return tooLong(bytes);
    }
  }
  if (query === '' || !query.includes('%')) return null;
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    const name = decoded(eq === -1 ? pair : pair.slice(0, eq), true);
    const value = eq === -1 ? '' : decoded(pair.slice(eq + 1), true);
    // A parameter is named in the answer only when its name itself is sound.
    const field = name === null || name.includes(NUL) ? 'query' : name;
    if (name === null || value === null) return validationFailed(field, 'is not valid percent-encoded UTF-8');
    if (name.includes(NUL) || value.includes(NUL)) return validationFailed(field, 'must not contain NUL (%00)');
  }
  return null;
}

/**
 * Checks every request's target in onRequest, before authentication and before any body is read:
 * a malformed target is answered the same with or without a key, and never reaches a handler or a
 * store. The WebSocket upgrade (not routed by Fastify) calls requestTargetProblem itself.
 */
export function installRequestTargetCheck(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (req, reply, done) => {
    const problem = requestTargetProblem(req.raw.url ?? '/');
    if (!problem) return done();
    // The body (if any) is never read: the connection closes behind the answer.
    if (announcesBody(req.headers)) void reply.header('connection', 'close');
    void reply.code(statusOf(problem.code)).send(toErrorBody(problem));
  });
}

/**
 * Fastify's `frameworkErrors`: what its router refuses before any hook runs (a path that does not
 * decode as UTF-8, a parameter past ROUTER_MAX_PARAM_LENGTH), mapped like every other error.
 */
export function answerRouterError(error: Error, req: FastifyRequest, reply: FastifyReply): void {
  const err = fromFrameworkError(error);
  if (announcesBody(req.headers)) void reply.header('connection', 'close');
  void reply.code(statusOf(err.code)).send(toErrorBody(err));
}
