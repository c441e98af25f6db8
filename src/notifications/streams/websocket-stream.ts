import { IncomingMessage, Server } from 'http';
import { Injectable } from '@nestjs/common';
import { Duplex } from 'stream';
import { WebSocket, WebSocketServer } from 'ws';
import { DomainError } from '../../common/domain-error';
import { requestTargetProblem } from '../../common/url-params';
import { StreamOptions } from './stream-options';
import { AdmittedStream, StreamHub, StreamRequest } from './stream-hub';
import { apiKeyOf, decodePathSegment, destroySocket, refuse, STREAM_PROTOCOL } from './websocket-handshake';
import { WebSocketStreamConnection } from './websocket-stream-connection';

export { STREAM_PROTOCOL } from './websocket-handshake';

const STREAM_PATH = /^\/projections\/([^/]+)\/stream$/;
/** The tenant's log (GET /events/stream); a plain GET of it is a route (SSE, or the aggregate named `stream`). */
const EVENT_STREAM_PATH = '/events/stream';
/** How long close() waits for close handshakes before cutting sockets. */
const SHUTDOWN_GRACE_MS = 1000;

/**
 * `GET /projections/{id}/stream` and `GET /events/stream` over WebSocket, on the HTTP server's
 * 'upgrade' event so that every refusal is a plain HTTP response with the service's error body,
 * before any handshake. The upgrade is connection setup, not a hop of an event's path: StreamHub
 * admits the stream (key, scope, caps, cursor) and, once the handshake is done, owns its cursor,
 * which writes to the WebSocketStreamConnection.
 */
@Injectable()
export class WebSocketStreamServer {
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: 4096,
    // Never the key's entry: only the fixed protocol is ever answered.
    handleProtocols: (protocols) => (protocols.has(STREAM_PROTOCOL) ? STREAM_PROTOCOL : false),
  });
  private readonly connections = new Set<WebSocketStreamConnection<unknown>>();
  private readonly upgradeListeners = new Map<Server, (req: IncomingMessage, socket: Duplex, head: Buffer) => void>();
  private closed = false;

  constructor(
    private readonly hub: StreamHub,
    private readonly opts: StreamOptions,
  ) {}

  attach(server: Server): void {
    if (this.upgradeListeners.has(server)) return;
    const listener = (req: IncomingMessage, socket: Duplex, head: Buffer) => this.onUpgrade(server, req, socket, head);
    this.upgradeListeners.set(server, listener);
    server.on('upgrade', listener);
  }

  connectionCount(): number {
    return this.connections.size;
  }

  /** A removed tenant's streams (src/tenant-transfer): closed with 1001 'tenant removed'; resolves once their sockets are gone. */
  async closeTenant(tenantId: string): Promise<void> {
    await Promise.all(
      [...this.connections].filter((c) => c.tenantId === tenantId).map((c) => c.shutDown(SHUTDOWN_GRACE_MS, 'tenant removed')),
    );
  }

  /** Closes every stream with 1001 and resolves once their sockets are gone. */
  async close(): Promise<void> {
    this.closed = true;
    for (const [server, listener] of this.upgradeListeners) server.off('upgrade', listener);
    this.upgradeListeners.clear();
    await Promise.all([...this.connections].map((c) => c.shutDown(SHUTDOWN_GRACE_MS)));
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private onUpgrade(server: Server, req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const request = streamRequest(url);
    if (!request) {
      // Another upgrade handler may own this path: answering is left to it unless there is none.
      if (server.listenerCount('upgrade') <= 1) refuse(socket, new DomainError('NOT_FOUND', 'route not found'));
      return;
    }
    // The same target rule as every routed request (NUL, not UTF-8, too long), before anything else:
    // URLSearchParams would otherwise turn what is not UTF-8 into U+FFFD silently.
    const problem = requestTargetProblem(req.url ?? '/');
    if (problem) {
      refuse(socket, problem);
      return;
    }
    // Without a listener a socket error during the asynchronous checks would crash the process.
    socket.on('error', destroySocket);
    this.admit(req, socket, head, url.searchParams, request).catch((err: unknown) => {
      refuse(socket, err instanceof DomainError ? err : new DomainError('INTERNAL', 'internal error'));
    });
  }

  private async admit(req: IncomingMessage, socket: Duplex, head: Buffer, query: URLSearchParams, request: StreamRequest): Promise<void> {
    const owner = await this.hub.authenticate(apiKeyOf(req, query), request.kind);
    const stream = await this.hub.admit(owner, 'websocket', socket, request);
    if (this.closed) {
      socket.destroy();
      return;
    }
    socket.off('error', destroySocket);
    this.wss.handleUpgrade(req, socket, head, (ws) => this.connected(ws, stream));
  }

  /** The handshake is done: the stream's connection, and its cursor registered with the hub until the socket closes. */
  private connected(ws: WebSocket, stream: AdmittedStream<unknown>): void {
    const connection = new WebSocketStreamConnection(ws, stream.owner.tenantId, stream.wire, this.opts);
    this.connections.add(connection);
    const cursor = this.hub.open(stream, connection);
    ws.once('close', () => {
      this.hub.leave(cursor);
      this.connections.delete(connection);
    });
  }
}

const once = (values: string[] | undefined) => (values?.length === 1 ? values[0] : values);

/** The stream a path asks for, its cursor and filters read from the query; null: not a stream path. */
function streamRequest(url: URL): StreamRequest | null {
  const query = url.searchParams;
  if (url.pathname === EVENT_STREAM_PATH) {
    // A filter given more than once is one list, as on the HTTP routes.
    const given = (name: string) => (query.has(name) ? query.getAll(name) : undefined);
    const after = query.get('afterPosition');
    return {
      kind: 'events',
      // `query` as the HTTP routes get it: one string, or an array when given twice (refused as such).
      filters: { aggregateType: given('aggregateType'), eventType: given('eventType'), query: once(given('query')) },
      after: after === null ? undefined : { field: 'afterPosition', text: after },
    };
  }
  const match = STREAM_PATH.exec(url.pathname);
  if (!match) return null;
  const after = query.get('afterSequence');
  return {
    kind: 'projection',
    projectionId: decodePathSegment(match[1]),
    after: after === null ? undefined : { field: 'afterSequence', text: after },
  };
}
