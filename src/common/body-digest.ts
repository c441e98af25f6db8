import { createHash } from 'node:crypto';

const digests = new WeakMap<object, string>();

/**
 * SHA-256 (hex) of the method, the route and the body text of a request, recorded by the JSON body
 * parser (exact-json-http.ts) only when the request carries an Idempotency-Key: what "the same
 * request" means for a retried append (README "Retrying appends safely"). The body is hashed as
 * received (the UTF-8 text, before any parsing), so a retry must resend the same bytes.
 */
export function recordBodyDigest(req: object, method: string, route: string, body: string): void {
  digests.set(req, createHash('sha256').update(`${method} ${route}\n`).update(body, 'utf8').digest('hex'));
}

/** The digest recorded for this request, if its body was parsed with one. */
export function bodyDigestOf(req: object): string | undefined {
  return digests.get(req);
}
