import type { FastifyInstance } from 'fastify';
import { withExactNumbers } from './exact-json';
import { stringifyJson } from './raw-json';
import { routeOptionsOf } from './route-options';

/**
 * JSON in and out of HTTP without changing a number. Bodies go through Fastify's own parser first
 * (its errors, size limit and prototype-poisoning refusal stay as they were); on routes marked
 * `@ExactNumbers()` (appends: their bodies are facts) any number a double would change is then kept
 * as RawJson. Other bodies are settings and ids, where `1.0` may well mean 1. Replies are written by
 * stringifyJson, which splices RawJson (stored events, C# states) verbatim; a reply without one
 * costs one JSON.stringify as before.
 */
export function installExactJson(fastify: FastifyInstance): void {
  const fastifyJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    fastifyJson(req, body as string, (err, parsed) => {
      if (err) return done(err, undefined);
      if (!routeOptionsOf(req).exactNumbers) return done(null, parsed);
      let value: unknown;
      try {
        value = withExactNumbers(body as string, parsed);
      } catch (e) {
        return done(e as Error, undefined);
      }
      done(null, value);
    });
  });
  fastify.setReplySerializer((payload) => stringifyJson(payload));
}
