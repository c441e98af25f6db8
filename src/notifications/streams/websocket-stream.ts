import { IncomingMessage, Server, STATUS_CODES } from 'http';
import { Duplex } from 'stream';
import { RawData, WebSocket, WebSocketServer } from 'ws';
import { DomainError, validationFailed } from '../../common/domain-error';
import { errorHeaders, statusOf, toErrorBody } from '../../common/error-http-mapping';
import { requestTargetProblem } from '../../common/url-params';
import { parseLogFilters } from '../../events/log-query';
import { scopeCheck } from '../../tenancy/scope-check';
import { eventCursorFeed, EventStreamSource } from './event-stream-source';
import { NotificationCursor, parseSequence } from './notification-cursor';
import { StreamCursor } from './stream-cursor';
import { NO_TENANT_STREAM_QUOTA, StreamLimiter, TenantStreamQuota } from './stream-limiter';
import { StreamSource } from './stream-source';
import { EVENT_WIRE, NOTIFICATION_WIRE, StreamWire } from './stream-wire';

export interface WebSocketStreamOptions {
  /** Interval of `{"type":"ping"}`; a client without a pong by the next ping is closed. */
  pingIntervalMs: number;
  /** Bytes queued on a socket beyond which the client counts as too slow and is closed. */
  maxBufferedBytes: number;
  pageSize: number;
}

/** Application close codes (4000-4999 are free for applications per RFC 6455). */
export const CLOSE_PING_TIMEOUT = 4000;
export const CLOSE_SLOW_CONSUMER = 4008;
export const CLOSE_CURSOR_EXPIRED = 4010;
/** The stream's API key was revoked or expired while it ran (checked every KEY_WATCH_MS). */
export const CLOSE_KEY_REVOKED = 4001;
const CLOSE_GOING_AWAY = 1001;
const CLOSE_INTERNAL_ERROR = 1011;

const STREAM_PATH = /^\/projections\/([^/]+)\/stream$/;
/** The tenant's log (GET /events/stream); a plain GET of it is a route (SSE, or the aggregate named `stream`). */
const EVENT_STREAM_PATH = '/events/stream';
/** Browsers cannot set headers on a WebSocket, so the key may ride in the subprotocol list. */
const API_KEY_PROTOCOL_PREFIX = 'apikey.';
/**
 * The subprotocol the server answers with. A browser fails a handshake whose answered protocol it
 * did not offer, and answering the key's own entry would echo the key in a response header: so a
 * client that sends its key as `apikey.<key>` offers this one beside it, and gets this one back.
 */
export const STREAM_PROTOCOL = 'eventstore.v1';
/** How long close() waits for close handshakes before cutting sockets. */
const SHUTDOWN_GRACE_MS = 1000;

/**
 * `GET /projections/{id}/stream` and `GET /events/stream` over WebSocket, on the HTTP server's 'upgrade' event so that
 * every refusal is a plain HTTP response with the service's error body, before any handshake.
 */
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
    private readonly source: StreamSource,
    private readonly opts: WebSocketStreamOptions,
    private readonly limiter: StreamLimiter,
    private readonly tenantStreams: TenantStreamQuota = NO_TENANT_STREAM_QUOTA,
    /** The tenant's log; without it `/events/stream` is not a stream path here. */
    private readonly events?: EventStreamSource,
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
    const match = STREAM_PATH.exec(url.pathname) ?? (this.events && url.pathname === EVENT_STREAM_PATH ? [url.pathname] : null);
    if (!match) {
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
    this.admit(req, socket, head, match[1] ?? null, url.searchParams).catch((err: unknown) => {
      refuse(socket, err instanceof DomainError ? err : new DomainError('INTERNAL', 'internal error'));
    });
  }

  private async admit(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    /** null: the event stream. */
    encodedProjectionId: string | null,
    query: URLSearchParams,
  ): Promise<void> {
    const offered = offeredProtocols(req);
    if (offered.some((p) => p.startsWith(API_KEY_PROTOCOL_PREFIX)) && !offered.includes(STREAM_PROTOCOL)) {
      throw validationFailed(
        'Sec-WebSocket-Protocol',
        `a key sent as the subprotocol 'apikey.<key>' needs '${STREAM_PROTOCOL}' offered beside it, which is the one the server answers with: new WebSocket(url, ['${STREAM_PROTOCOL}', 'apikey.' + key])`,
      );
    }
    const tenant = await this.source.authenticate(apiKeyOf(req, query, offered));
    if (!tenant) throw new DomainError('UNAUTHORIZED', 'missing or invalid API key');
    // The upgrade is the stream route's WebSocket side: the same scope as its SSE side (@RequiresScope there).
    const scopeRefused = scopeCheck(tenant.scopes, encodedProjectionId === null ? 'events:read' : 'state:read');
    if (scopeRefused) throw scopeRefused;
    // The slot is taken before anything else is looked up and goes back when the socket closes,
    // whether the stream ran, was refused below or never finished its handshake.
    const release = this.limiter.acquire(tenant.keyHash, 'websocket');
    socket.once('close', release);
    if (socket.destroyed) release(); // gone during the lookup: its 'close' may have passed already
    const releaseTenant = await this.tenantStreams.acquireStream(tenant.tenantId);
    socket.once('close', releaseTenant);
    if (socket.destroyed) releaseTenant();
    const open =
      encodedProjectionId === null
        ? await this.eventStream(tenant.tenantId, query)
        : await this.projectionStream(tenant.tenantId, encodedProjectionId, query);
    if (this.closed) {
      socket.destroy();
      return;
    }
    socket.off('error', destroySocket);
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const connection = new WebSocketStreamConnection(ws, tenant.tenantId, open, this.opts);
      this.connections.add(connection);
      const unwatch = this.source.watchKey(tenant.keyHash, () => connection.keyRevoked());
      ws.once('close', () => {
        unwatch();
        this.connections.delete(connection);
      });
    });
  }

  private async projectionStream(tenantId: string, encodedProjectionId: string, query: URLSearchParams): Promise<OpenStream<unknown>> {
    const afterParam = query.get('afterSequence');
    const explicitAfter = afterParam === null ? null : parseSequence('afterSequence', afterParam);
    const projectionId = decodePathSegment(encodedProjectionId);
    if (projectionId === null || !(await this.source.projection(tenantId, projectionId))) {
      throw new DomainError('NOT_FOUND', 'projection not found');
    }
    const afterSequence = explicitAfter ?? (await this.source.headSequence(tenantId, projectionId));
    return {
      wire: NOTIFICATION_WIRE,
      cursor: (send) => new NotificationCursor(this.source, tenantId, projectionId, afterSequence, send, this.opts),
    } as OpenStream<unknown>;
  }

  /** The filters and the cursor are checked as GET /events checks them; no cursor: from the head (live only). */
  private async eventStream(tenantId: string, query: URLSearchParams): Promise<OpenStream<unknown>> {
    const events = this.events!;
    // A filter given more than once is one list, as on the HTTP routes.
    const given = (name: string) => (query.has(name) ? query.getAll(name) : undefined);
    const filters = parseLogFilters({ aggregateType: given('aggregateType'), eventType: given('eventType') });
    const afterParam = query.get('afterPosition');
    const afterPosition = afterParam === null ? await events.headPosition(tenantId) : parseSequence('afterPosition', afterParam);
    return {
      wire: EVENT_WIRE,
      cursor: (send) => new StreamCursor(eventCursorFeed(events, tenantId, filters), afterPosition, send, this.opts),
    } as OpenStream<unknown>;
  }
}

/** A stream admitted: how its items are written, and its cursor once the transport can send. */
interface OpenStream<T> {
  wire: StreamWire<T>;
  cursor: (send: (item: T) => boolean) => StreamCursor<T>;
}

/** One client: its cursor, its keepalive and the reasons it gets closed. */
class WebSocketStreamConnection<T> {
  private readonly cursor: StreamCursor<T>;
  private readonly wire: StreamWire<T>;
  private readonly pingTimer: NodeJS.Timeout;
  /** Cleared by any pong (message or frame); still set at the next ping means the client is gone. */
  private awaitingPong = false;

  constructor(
    private readonly ws: WebSocket,
    readonly tenantId: string,
    open: OpenStream<T>,
    private readonly opts: WebSocketStreamOptions,
  ) {
    this.wire = open.wire;
    this.cursor = open.cursor(this.send);
    this.cursor.onError = this.onCursorError;
    this.pingTimer = setInterval(this.ping, opts.pingIntervalMs);
    // Protocol errors (e.g. a message over maxPayload) are reported here and then closed by ws itself.
    ws.on('error', () => undefined);
    ws.on('message', this.onMessage);
    ws.on('pong', this.onPong);
    ws.once('close', () => {
      clearInterval(this.pingTimer);
      this.cursor.stop();
    });
    this.cursor.start();
  }

  shutDown(graceMs: number, reason = 'server shutting down'): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      const cut = setTimeout(() => this.ws.terminate(), graceMs);
      this.ws.once('close', () => {
        clearTimeout(cut);
        resolve();
      });
      this.close(CLOSE_GOING_AWAY, reason);
    });
  }

  keyRevoked(): void {
    this.close(CLOSE_KEY_REVOKED, JSON.stringify({ code: 'KEY_REVOKED' }));
  }

  private readonly send = (item: T): boolean => {
    if (this.ws.readyState !== WebSocket.OPEN) return false;
    this.corkUntilNextTick();
    this.ws.send(this.wire.text(item));
    if (this.ws.bufferedAmount <= this.opts.maxBufferedBytes) return true;
    // Everything up to this item is already queued ahead of the close frame, so the client has it all.
    this.close(CLOSE_SLOW_CONSUMER, JSON.stringify({ code: 'SLOW_CONSUMER', [this.wire.resumeField]: this.wire.numberOf(item) }));
    return false;
  };

  private corked = false;

  /**
   * A page of notifications leaves as one socket write instead of one per message (the write
   * calls were most of the CPU with 100 clients). ws has no public handle on its socket.
   */
  private corkUntilNextTick(): void {
    const socket = (this.ws as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
    if (this.corked || !socket) return;
    this.corked = true;
    socket.cork();
    process.nextTick(() => {
      this.corked = false;
      socket.uncork();
    });
  }

  private readonly onCursorError = (err: unknown): void => {
    if (err instanceof DomainError && err.code === 'CURSOR_EXPIRED') {
      this.close(CLOSE_CURSOR_EXPIRED, JSON.stringify({ code: 'CURSOR_EXPIRED', oldestSequence: err.details.oldestSequence }));
    } else {
      this.close(CLOSE_INTERNAL_ERROR, 'internal error');
    }
  };

  private readonly ping = (): void => {
    if (this.awaitingPong) {
      this.close(CLOSE_PING_TIMEOUT, 'ping timeout');
      return;
    }
    this.awaitingPong = true;
    // Only the JSON ping: a protocol ping is answered by every client automatically, which
    // would make the pong the contract asks for unenforceable.
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: 'ping' }));
  };

  private readonly onMessage = (data: RawData, isBinary: boolean): void => {
    if (isBinary) return;
    try {
      const message = JSON.parse(data.toString()) as { type?: unknown } | null;
      if (message?.type === 'pong') this.onPong();
    } catch {
      // Clients have nothing else to say; anything unparsable is ignored rather than fatal.
    }
  };

  private readonly onPong = (): void => {
    this.awaitingPong = false;
  };

  private close(code: number, reason: string): void {
    clearInterval(this.pingTimer);
    this.cursor.stop();
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(code, reason);
  }
}

function offeredProtocols(req: IncomingMessage): string[] {
  return (req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
}

function apiKeyOf(req: IncomingMessage, query: URLSearchParams, offered: string[]): string | undefined {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header) return header;
  const fromQuery = query.get('apiKey');
  if (fromQuery) return fromQuery;
  const fromProtocol = offered.find((p) => p.startsWith(API_KEY_PROTOCOL_PREFIX));
  return fromProtocol ? fromProtocol.slice(API_KEY_PROTOCOL_PREFIX.length) : undefined;
}

function decodePathSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** The refusal goes out as plain HTTP since no handshake happened; the body is the service's error body. */
function refuse(socket: Duplex, err: DomainError): void {
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

function destroySocket(this: Duplex): void {
  this.destroy();
}
