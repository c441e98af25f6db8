import type { FastifyInstance } from 'fastify';
import { recordBodyDigest } from './body-digest';
import { recordPayloadTexts } from './json-source-text';
import { stringifyJson } from './raw-json';
import { routeOptionsOf } from './route-options';

/**
 * JSON in and out of HTTP without changing a number. Bodies go through Fastify's own parser (its
 * errors, size limit and prototype-poisoning refusal stay as they were); on routes marked
 * `@ExactPayloads()` (the appends) the source text of each payload is recorded as well, and that
 * text is what gets stored. Replies are written by stringifyJson, which splices RawJson (stored
 * events, C# states) verbatim; a reply without one costs one JSON.stringify as before.
 */
export function installExactJson(fastify: FastifyInstance): void {
  const fastifyJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    fastifyJson(req, body as string, (err, parsed) => {
      if (err) return done(err, undefined);
      if (routeOptionsOf(req).exactPayloads) {
        try {
          recordPayloadTexts(body as string, parsed);
        } catch (e) {
          return done(e as Error, undefined);
        }
        // A retried append is recognised by its bytes; hashed only when the client asked for that.
        if (req.headers['idempotency-key'] !== undefined)
          recordBodyDigest(req, req.method, req.routeOptions.url ?? req.url, body as string);
      }
      done(null, parsed);
    });
  });
  fastify.setReplySerializer((payload) => stringifyJson(payload));
}
