import type { Socket } from 'node:net';
import { DomainError } from './domain-error';
import { errorHeaders, statusOf, toErrorBody } from './error-http-mapping';

/**
 * Answers what Node refuses before a request reaches Fastify (headers past HEADERS_TIMEOUT_MS, a
 * request past REQUEST_TIMEOUT_MS, oversized or malformed headers) in the service's error format,
 * then closes. Nothing is logged: Fastify's own handler logs the error with its raw packet, which
 * may hold a key.
 */
export function answerClientError(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const refusal =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new DomainError('REQUEST_TIMEOUT', 'the request did not fully arrive in time')
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? new DomainError('PAYLOAD_TOO_LARGE', 'the request headers are larger than the limit', { field: 'headers' })
        : new DomainError('VALIDATION_FAILED', 'malformed HTTP request');
  const status = statusOf(refusal.code);
  const body = JSON.stringify(toErrorBody(refusal));
  const extra = Object.entries(errorHeaders(refusal))
    .filter(([name]) => name !== 'connection')
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 ${status} ${refusal.code === 'REQUEST_TIMEOUT' ? 'Request Timeout' : status === 413 ? 'Payload Too Large' : 'Bad Request'}\r\n` +
        `Connection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`,
    );
  }
  socket.destroySoon();
}
