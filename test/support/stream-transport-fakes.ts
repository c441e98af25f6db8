import http from 'node:http';
import { AddressInfo } from 'node:net';
import { ClientOptions, WebSocket } from 'ws';
import { DomainError } from '../../src/common/domain-error';
import { statusOf, toErrorBody } from '../../src/common/error-http-mapping';
import { LogFilters } from '../../src/events/log-query';
import { Notification } from '../../src/notifications/log/notification';
import { EventStreamSource } from '../../src/notifications/streams/event-stream-source.port';
import { projectionSseRequest, SseStream } from '../../src/notifications/streams/sse-stream';
import { StreamHub } from '../../src/notifications/streams/stream-hub';
import { StreamLimiter, StreamLimits } from '../../src/notifications/streams/stream-limiter';
import { StreamOptions } from '../../src/notifications/streams/stream-options';
import { StreamSource } from '../../src/notifications/streams/stream-source.port';
import { NO_TENANT_STREAM_QUOTA } from '../../src/notifications/streams/tenant-stream-quota.port';
import { WebSocketStreamServer } from '../../src/notifications/streams/websocket-stream';
import { StoredEvent } from '../../src/store/event-log.port';
import { HeldScopes } from '../../src/tenancy/scope-check';
import { elapse } from './wait';

// The stream transports' unit setup: the real hub, transports and limiter over an in-memory source,
// on a plain HTTP server standing in for Fastify (the SSE route: tenant authenticated, reply hijacked).

export const API_KEY = 'key-a';
export const TENANT = 'tenant-a';
/** Has a slash so that the URL-decoding of the id is exercised. */
export const PROJECTION = 'orders/eu';
export const NO_SSE_PROJECTION = 'audit';
export const STREAM_PATH = `/projections/${encodeURIComponent(PROJECTION)}/stream`;

export async function until(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await elapse(5, 'poll interval');
  }
}

export const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** In memory, with the two behaviours the transports must survive: slow reads and retention. Appends wake `hub`, as the feed would. */
export class FakeSource implements StreamSource {
  readonly notifications: Notification[] = [];
  /** Delay of a read after its snapshot was taken: appends during it race the pump. */
  readDelayMs = 0;
  oldestKept = 1;
  /** Runs after a read took its snapshot and before it returns: a store write racing the read. */
  onRead: ((page: Notification[]) => void) | null = null;
  readsInFlight = 0;
  maxReadsInFlight = 0;
  /** Who an append wakes (the feed's part): the hub under test. */
  hub: Pick<StreamHub, 'wakeProjection'> | null = null;

  watchKey(_keyHash: string, _onInvalid: () => void): () => void {
    return () => undefined;
  }
  async authenticate(apiKey: string | undefined): Promise<{ tenantId: string; keyHash: string; scopes: HeldScopes } | null> {
    return apiKey === API_KEY ? { tenantId: TENANT, keyHash: `hash-of-${apiKey}`, scopes: null } : null;
  }

  async projection(tenantId: string, projectionId: string) {
    if (tenantId !== TENANT) return null;
    if (projectionId === PROJECTION) return { sse: true };
    if (projectionId === NO_SSE_PROJECTION) return { sse: false };
    return null;
  }

  async headSequence() {
    return this.notifications.length;
  }

  async read(tenantId: string, projectionId: string, afterSequence: number, limit: number) {
    if (afterSequence + 1 < this.oldestKept) {
      throw new DomainError('CURSOR_EXPIRED', 'cursor expired', { oldestSequence: this.oldestKept });
    }
    const page = this.notifications.slice(afterSequence, afterSequence + limit);
    this.readsInFlight++;
    this.maxReadsInFlight = Math.max(this.maxReadsInFlight, this.readsInFlight);
    try {
      // A real read is I/O: without yielding to the event loop a pump would never let sockets drain.
      await new Promise((resolve) => setImmediate(resolve));
      this.onRead?.(page);
      if (this.readDelayMs) await elapse(this.readDelayMs, 'a slow read');
      return page;
    } finally {
      this.readsInFlight--;
    }
  }

  append(count: number, state = '{"total":1}') {
    for (let i = 0; i < count; i++) {
      const sequence = this.notifications.length + 1;
      this.notifications.push({
        sequence,
        projectionId: PROJECTION,
        aggregateId: `order-${sequence}`,
        aggregateType: 'order',
        stateKey: `order-${sequence}`,
        version: 1,
        position: sequence,
        state,
        timestamp: Date.UTC(2025, 0, 1) + sequence,
      });
    }
    this.hub?.wakeProjection(TENANT, PROJECTION);
  }
}

/** A tenant's log with no events (the transports' tests follow projections). */
export class EmptyEventSource implements EventStreamSource {
  reads = 0;
  async headPosition(): Promise<number> {
    return 0;
  }
  async read(_tenantId: string, _filters: LogFilters, _after: number, _limit: number): Promise<StoredEvent[]> {
    this.reads++;
    return [];
  }
}

interface StreamMessage {
  type: string;
  sequence?: number;
  [field: string]: unknown;
}

export class TestClient {
  readonly messages: StreamMessage[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => this.messages.push(JSON.parse(data.toString()) as StreamMessage));
    ws.on('error', () => undefined);
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  sequences(): number[] {
    return this.messages.filter((m) => m.type === 'state_changed').map((m) => m.sequence as number);
  }

  pings(): number {
    return this.messages.filter((m) => m.type === 'ping').length;
  }

  opened(): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.ws.readyState === WebSocket.OPEN) return resolve();
      this.ws.once('open', () => resolve());
      this.ws.once('unexpected-response', (_req, res) => reject(new Error(`refused with ${res.statusCode}`)));
    });
  }
}

export interface SseEvent {
  id?: string;
  event?: string;
  data?: string;
}

/** A minimal event-stream parser, so the test sees exactly the bytes a browser would. */
export class SseClient {
  readonly events: SseEvent[] = [];
  readonly comments: string[] = [];
  readonly ended: Promise<void>;
  private buffer = '';

  constructor(readonly res: http.IncomingMessage) {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => this.parse(chunk));
    this.ended = new Promise((resolve) => res.once('close', () => resolve()));
  }

  sequences(): number[] {
    return this.events.filter((e) => e.event === 'state_changed').map((e) => Number(e.id));
  }

  private parse(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const event: SseEvent = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.comments.push(line.slice(1).trim());
          continue;
        }
        const colon = line.indexOf(':');
        const field = line.slice(0, colon) as keyof SseEvent;
        event[field] = line.slice(colon + 1).replace(/^ /, '');
      }
      if (Object.keys(event).length) this.events.push(event);
    }
  }
}

/** One server with both transports over one hub and one limiter; `stop()` after each test. */
export class TransportsHarness {
  readonly source = new FakeSource();
  readonly limiter: StreamLimiter;
  readonly hub: StreamHub;
  readonly ws: WebSocketStreamServer;
  readonly sse: SseStream;
  readonly handleFailures: { err: unknown; headersSent: boolean }[] = [];
  private readonly server: http.Server;
  private readonly clients: WebSocket[] = [];
  private readonly sseRequests: http.ClientRequest[] = [];
  private port = 0;

  private constructor(options: StreamOptions, limits: StreamLimits) {
    this.limiter = new StreamLimiter(limits);
    this.hub = new StreamHub(this.source, new EmptyEventSource(), this.limiter, NO_TENANT_STREAM_QUOTA, options);
    this.source.hub = this.hub;
    this.ws = new WebSocketStreamServer(this.hub, options);
    this.sse = new SseStream(this.hub, options);
    this.server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const match = /^\/projections\/([^/]+)\/stream$/.exec(url.pathname);
      if (!match) return void res.writeHead(404).end();
      const afterSequence = url.searchParams.get('afterSequence') ?? undefined;
      const lastEventId = req.headers['last-event-id'] as string | undefined;
      const owner = { tenantId: TENANT, keyHash: `hash-of-${API_KEY}` };
      const request = projectionSseRequest(decodeURIComponent(match[1]), afterSequence, lastEventId);
      this.sse.open(req, res, owner, request).catch((err: unknown) => {
        this.handleFailures.push({ err, headersSent: res.headersSent });
        const domain = err instanceof DomainError ? err : new DomainError('INTERNAL', String(err));
        res.writeHead(statusOf(domain.code), { 'content-type': 'application/json' }).end(JSON.stringify(toErrorBody(domain)));
      });
    });
    this.ws.attach(this.server);
  }

  static async start(opts: { options?: Partial<StreamOptions>; limits?: StreamLimits } = {}): Promise<TransportsHarness> {
    const options = { pingIntervalMs: 10_000, heartbeatMs: 10_000, maxBufferedBytes: 1 << 20, pageSize: 7, ...opts.options };
    const h = new TransportsHarness(options, opts.limits ?? { perKey: 1000, perInstance: 1000 });
    await new Promise<void>((resolve) => h.server.listen(0, '127.0.0.1', resolve));
    h.port = (h.server.address() as AddressInfo).port;
    return h;
  }

  get http(): http.Server {
    return this.server;
  }

  /** Streams whose cursor the hub still holds. */
  openCursors(): number {
    return this.hub.openCount();
  }

  async stop(): Promise<void> {
    for (const ws of this.clients) ws.terminate();
    for (const req of this.sseRequests) req.destroy();
    await this.ws.close();
    this.sse.close();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  connect(query = '', options: ClientOptions & { protocols?: string[] } = { headers: { 'x-api-key': API_KEY } }, path = STREAM_PATH) {
    const { protocols, ...rest } = options;
    const ws = new WebSocket(`ws://127.0.0.1:${this.port}${path}${query}`, protocols ?? [], rest);
    this.clients.push(ws);
    return new TestClient(ws);
  }

  async connected(query = '', options?: ClientOptions & { protocols?: string[] }) {
    const client = this.connect(query, options);
    await client.opened();
    return client;
  }

  /** A handshake refused: its status and the service's error body. */
  refusal(query: string, headers: Record<string, string> = { 'x-api-key': API_KEY }, path = STREAM_PATH, protocols: string[] = []) {
    return new Promise<{ status: number; text: string; body: { error: string; message: string } }>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${this.port}${path}${query}`, protocols, { headers });
      this.clients.push(ws);
      ws.on('error', () => undefined);
      ws.on('open', () => reject(new Error('the handshake was accepted')));
      ws.on('unexpected-response', (_req, res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, body: JSON.parse(text) }));
      });
    });
  }

  openSse(query = '', headers: Record<string, string> = {}, projectionId = PROJECTION) {
    return new Promise<SseClient>((resolve, reject) => {
      const req = http.get(
        {
          host: '127.0.0.1',
          port: this.port,
          path: `/projections/${encodeURIComponent(projectionId)}/stream${query}`,
          headers,
          agent: false,
        },
        (res) => resolve(new SseClient(res)),
      );
      req.on('error', reject);
      this.sseRequests.push(req);
    });
  }
}
