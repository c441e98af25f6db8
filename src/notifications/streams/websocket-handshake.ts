import { IncomingMessage, STATUS_CODES } from 'http';
import { Duplex } from 'stream';
import { DomainError, validationFailed } from '../../common/domain-error';
import { errorHeaders, statusOf, toErrorBody } from '../../common/error-http-mapping';

/** Browsers cannot set headers on a WebSocket, so the key may ride in the subprotocol list. */
const API_KEY_PROTOCOL_PREFIX = 'apikey.';
/**
 * The subprotocol the server answers with. A browser fails a handshake whose answered protocol it
 * did not offer, and answering the key's own entry would echo the key in a response header: so a
 * client that sends its key as `apikey.<key>` offers this one beside it, and gets this one back.
 */
export const STREAM_PROTOCOL = 'eventstore.v1';

/** The API key of an upgrade request: the X-API-Key header, the apiKey query parameter or an `apikey.<key>` subprotocol. */
export function apiKeyOf(req: IncomingMessage, query: URLSearchParams): string | undefined {
  const offered = offeredProtocols(req);
  if (offered.some((p) => p.startsWith(API_KEY_PROTOCOL_PREFIX)) && !offered.includes(STREAM_PROTOCOL)) {
    throw validationFailed(
      'Sec-WebSocket-Protocol',
      `a key sent as the subprotocol 'apikey.<key>' needs '${STREAM_PROTOCOL}' offered beside it, which is the one the server answers with: new WebSocket(url, ['${STREAM_PROTOCOL}', 'apikey.' + key])`,
    );
  }
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header) return header;
  const fromQuery = query.get('apiKey');
  if (fromQuery) return fromQuery;
  const fromProtocol = offered.find((p) => p.startsWith(API_KEY_PROTOCOL_PREFIX));
  return fromProtocol ? fromProtocol.slice(API_KEY_PROTOCOL_PREFIX.length) : undefined;
}

function offeredProtocols(req: IncomingMessage): string[] {
  return (req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
}

/** A path segment as the client meant it; null when it does not decode. */
export function decodePathSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** The refusal goes out as plain HTTP since no handshake happened; the body is the service's error body. */
export function refuse(socket: Duplex, err: DomainError): void {
  if (socket.destroyed) return;
  const status = statusOf(err.code);
  const body = JSON.stringify(toErrorBody(err));
  const extra = Object.entries(errorHeaders(err))
    .filter(([name]) => name !== 'connection')
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Connection: close\r\n' +
      extra +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      '\r\n' +
      body,
  );
}

export function destroySocket(this: Duplex): void {
  this.destroy();
}
