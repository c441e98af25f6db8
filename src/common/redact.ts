/**
 * Secrets a request may carry — an API key in `X-API-Key`, `?apiKey=` or the WebSocket subprotocol
 * `apikey.<key>`, the admin token in `Authorization` — never reach a log line; nor do webhook secrets
 * (`whsec_…`) or a password in a connection URL (`postgres://user:password@…`). Every log writer of the
 * service passes its output through here (Fastify's logger stream, the Nest logger), so a URL or a
 * header that some library logs at trace level is covered too, not only the ones we log ourselves.
 */
const CENSOR = '[REDACTED]';

const RULES: [RegExp, string][] = [
  // ?apiKey=… / &api_key=… in any URL or query string.
  [/([?&;]api[-_]?key=)[^&#\s"'\\]*/gi, `$1${CENSOR}`],
  // "x-api-key":"…", authorization: …, sec-websocket-protocol: … (JSON logs, header dumps).
  [/((?:x-api-key|authorization|sec-websocket-protocol)["']?\s*[:=]\s*["']?)[^"'\r\n]*/gi, `$1${CENSOR}`],
  // The subprotocol form, wherever it appears on its own.
  [/\bapikey\.[^\s,"'\\]+/gi, `apikey.${CENSOR}`],
  [/\bBearer\s+[^\s,"'\\]+/g, `Bearer ${CENSOR}`],
  // Issued keys and webhook secrets have a recognisable prefix: whatever logged them, they go.
  [/\besk_[A-Za-z0-9_-]+/g, `esk_${CENSOR}`],
  [/\bwhsec_[A-Za-z0-9+/=_-]+/g, `whsec_${CENSOR}`],
  // A password in a URL's user info (a driver's error quoting DATABASE_URL or REDIS_URL).
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@"']*:)[^\s@/"']+@/gi, `$1${CENSOR}@`],
];

export function redactSecrets(text: string): string {
  if (typeof text !== 'string') return text;
  let out = text;
  for (const [pattern, replacement] of RULES) out = out.replace(pattern, replacement);
  return out;
}

/** A request URL as it may be logged: the path and every query parameter but the key's value. */
export function redactUrl(url: string | undefined): string {
  return url === undefined ? '' : redactSecrets(url);
}
