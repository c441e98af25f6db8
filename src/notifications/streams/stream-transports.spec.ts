import http from 'http';
import { AddressInfo, Socket } from 'net';
import { ClientOptions, WebSocket } from 'ws';
import { DomainError } from '../../common/domain-error';
import { statusOf, toErrorBody } from '../../common/error-http-mapping';
import { Notification } from '../log/notification';
import { NotificationCursor } from './notification-cursor';
import { SseStream, SseStreamOptions } from './sse-stream';
import { StreamLimiter, StreamLimits } from './stream-limiter';
import { StreamSource } from './stream-source';
import { STREAM_PROTOCOL, WebSocketStreamOptions, WebSocketStreamServer } from './websocket-stream';
import { elapse } from '../../../test/support/wait';

const API_KEY = 'key-a';
const TENANT = 'tenant-a';
/** Has a slash so that the URL-decoding of the id is exercised. */
const PROJECTION = 'orders/eu';
const NO_SSE_PROJECTION = 'audit';
const STREAM_PATH = `/projections/${encodeURIComponent(PROJECTION)}/stream`;

async function until(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await elapse(5, 'poll interval');
  }
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** In memory, with the two behaviours the transports must survive: slow reads and retention. */
class FakeSource implements StreamSource {
  readonly notifications: Notification[] = [];
  /** Delay of a read after its snapshot was taken: appends during it race the pump. */
  readDelayMs = 0;
  oldestKept = 1;
  /** Runs after a read took its snapshot and before it returns: a store write racing the read. */
  onRead: ((page: Notification[]) => void) | null = null;
  readsInFlight = 0;
  maxReadsInFlight = 0;
  private readonly wakes = new Set<() => void>();

  watchKey() {
    return () => undefined;
  }
  async authenticate(apiKey: string | undefined) {
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

  subscribe(tenantId: string, projectionId: string, wake: () => void) {
    this.wakes.add(wake);
    return () => this.wakes.delete(wake);
  }

  subscriberCount() {
    return this.wakes.size;
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
    for (const wake of this.wakes) wake();
  }
}

interface StreamMessage {
  type: string;
  sequence?: number;
  [field: string]: unknown;
}

class TestClient {
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

interface SseEvent {
  id?: string;
  event?: string;
  data?: string;
}

/** A minimal event-stream parser, so the test sees exactly the bytes a browser would. */
class SseClient {
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

describe('NotificationCursor', () => {
  it('stops pumping when the transport is over its bound and goes on from the cursor on resume()', async () => {
    const source = new FakeSource();
    source.append(10);
    const sent: number[] = [];
    let accepting = false;
    const cursor = new NotificationCursor(source, TENANT, PROJECTION, 0, (n) => (sent.push(n.sequence), accepting || n.sequence < 3), {
      pageSize: 4,
    });
    cursor.start();
    await until(() => sent.length === 3, 'three sends');
    source.append(2);
    await elapse(20, 'time for a send past the window, which must not go out');
    expect(sent).toEqual([1, 2, 3]);
    expect(cursor.lastSequence).toBe(3);
    accepting = true;
    cursor.resume();
    await until(() => sent.length === 12, 'the rest');
    expect(sent).toEqual(range(1, 12));
    cursor.stop();
  });

  it('sends nothing once stopped, even from a read already in flight', async () => {
    const source = new FakeSource();
    source.append(5);
    source.readDelayMs = 30;
    const sent: number[] = [];
    const cursor = new NotificationCursor(source, TENANT, PROJECTION, 0, (n) => (sent.push(n.sequence), true), { pageSize: 10 });
    cursor.start();
    await until(() => source.readsInFlight === 1, 'the first read');
    cursor.stop();
    await elapse(60, 'time for a stopped cursor to send, which it must not');
    expect(sent).toEqual([]);
    expect(source.subscriberCount()).toBe(0);
  });

  it('hands read failures to onError and lets go of the subscription', async () => {
    const source = new FakeSource();
    source.append(5);
    source.oldestKept = 3;
    const errors: unknown[] = [];
    const cursor = new NotificationCursor(source, TENANT, PROJECTION, 0, () => true, { pageSize: 10 });
    cursor.onError = (err) => errors.push(err);
    cursor.start();
    await until(() => errors.length === 1, 'the error');
    expect(errors[0]).toMatchObject({ code: 'CURSOR_EXPIRED', details: { oldestSequence: 3 } });
    expect(source.subscriberCount()).toBe(0);
  });
});

describe('stream transports', () => {
  let source: FakeSource;
  let server: http.Server;
  let wsStream: WebSocketStreamServer;
  let sse: SseStream;
  let port: number;
  let clients: WebSocket[];
  let sseRequests: http.ClientRequest[];
  let handleFailures: { err: unknown; headersSent: boolean }[];

  let limiter: StreamLimiter;

  async function start(opts: { ws?: Partial<WebSocketStreamOptions>; sse?: Partial<SseStreamOptions>; limits?: StreamLimits } = {}) {
    source = new FakeSource();
    clients = [];
    sseRequests = [];
    handleFailures = [];
    limiter = new StreamLimiter(opts.limits ?? { perKey: 1000, perInstance: 1000 });
    wsStream = new WebSocketStreamServer(source, { pingIntervalMs: 10_000, maxBufferedBytes: 1 << 20, pageSize: 7, ...opts.ws }, limiter);
    sse = new SseStream(source, { heartbeatMs: 10_000, maxBufferedBytes: 1 << 20, pageSize: 7, ...opts.sse }, limiter);
    server = http.createServer((req, res) => {
      // Stands in for the Fastify route: tenant already authenticated, reply hijacked.
      const url = new URL(req.url ?? '/', 'http://localhost');
      const match = /^\/projections\/([^/]+)\/stream$/.exec(url.pathname);
      if (!match) return void res.writeHead(404).end();
      const afterSequence = url.searchParams.get('afterSequence') ?? undefined;
      const lastEventId = req.headers['last-event-id'] as string | undefined;
      const owner = { tenantId: TENANT, keyHash: `hash-of-${API_KEY}` };
      sse.handle(req, res, owner, decodeURIComponent(match[1]), { afterSequence }, lastEventId).catch((err: unknown) => {
        handleFailures.push({ err, headersSent: res.headersSent });
        const domain = err instanceof DomainError ? err : new DomainError('INTERNAL', String(err));
        res.writeHead(statusOf(domain.code), { 'content-type': 'application/json' }).end(JSON.stringify(toErrorBody(domain)));
      });
    });
    wsStream.attach(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  }

  afterEach(async () => {
    for (const ws of clients) ws.terminate();
    for (const req of sseRequests) req.destroy();
    await wsStream.close();
    sse.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  function connect(
    query = '',
    options: ClientOptions & { protocols?: string[] } = { headers: { 'x-api-key': API_KEY } },
    path = STREAM_PATH,
  ) {
    const { protocols, ...rest } = options;
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}${query}`, protocols ?? [], rest);
    clients.push(ws);
    return new TestClient(ws);
  }

  async function connected(query = '', options?: ClientOptions & { protocols?: string[] }) {
    const client = connect(query, options);
    await client.opened();
    return client;
  }

  function refusal(query: string, headers: Record<string, string> = { 'x-api-key': API_KEY }, path = STREAM_PATH) {
    return new Promise<{ status: number; body: { error: string; message: string } }>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}${path}${query}`, { headers });
      clients.push(ws);
      ws.on('error', () => undefined);
      ws.on('open', () => reject(new Error('the handshake was accepted')));
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(body) }));
      });
    });
  }

  function openSse(query = '', headers: Record<string, string> = {}, projectionId = PROJECTION) {
    return new Promise<SseClient>((resolve, reject) => {
      const req = http.get(
        { host: '127.0.0.1', port, path: `/projections/${encodeURIComponent(projectionId)}/stream${query}`, headers, agent: false },
        (res) => resolve(new SseClient(res)),
      );
      req.on('error', reject);
      sseRequests.push(req);
    });
  }

  describe('WebSocket', () => {
    it('replays the backlog and goes live with no gap and no duplicate at the seam', async () => {
      await start();
      source.append(30);
      source.readDelayMs = 15;
      // The narrowest seam: a write while the read that found the backlog exhausted is in flight.
      let racingAppends = 5;
      source.onRead = (page) => {
        if (page.length === 0 && racingAppends-- > 0) source.append(1);
      };
      const client = await connected('?afterSequence=0');
      // And writes landing anywhere while pages are being read.
      for (let i = 0; i < 40; i++) {
        source.append(1);
        await elapse(3, 'writes land while pages are being read');
      }
      await until(() => client.sequences().length >= 75, '75 notifications');
      await elapse(50, 'time for a repeat or a gap to show, which none may');
      expect(client.sequences()).toEqual(range(1, 75));
      expect(racingAppends).toBeLessThan(0);
      expect(source.maxReadsInFlight).toBe(1);
      expect(client.messages[0]).toEqual({
        type: 'state_changed',
        sequence: 1,
        projectionId: PROJECTION,
        aggregateId: 'order-1',
        aggregateType: 'order',
        stateKey: 'order-1',
        version: 1,
        state: { total: 1 },
        timestamp: new Date(Date.UTC(2025, 0, 1) + 1).toISOString(),
      });
    });

    it('starts after the head when no afterSequence is given', async () => {
      await start();
      source.append(5);
      const client = await connected();
      source.append(2);
      await until(() => client.sequences().length >= 2, 'live notifications');
      await elapse(30, 'time for a repeat to show, which none may');
      expect(client.sequences()).toEqual([6, 7]);
    });

    it('resumes with afterSequence after a disconnect and releases the subscription', async () => {
      await start();
      source.append(10);
      const first = await connected('?afterSequence=0');
      await until(() => first.sequences().length >= 10, 'the backlog');
      first.ws.close();
      await first.closed;
      await until(() => wsStream.connectionCount() === 0 && source.subscriberCount() === 0, 'the server to let go');
      source.append(5);
      const second = await connected('?afterSequence=10');
      await until(() => second.sequences().length >= 5, 'the rest');
      await elapse(30, 'time for a repeat to show, which none may');
      expect(second.sequences()).toEqual(range(11, 15));
      expect(wsStream.connectionCount()).toBe(1);
    });

    it('accepts the API key as header, as apiKey query parameter and as apikey.<key> subprotocol, answering the fixed protocol', async () => {
      await start();
      const byHeader = await connected();
      const byQuery = await connected(`?apiKey=${API_KEY}`, {});
      let answered: string | undefined;
      const bySubprotocol = connect('', { protocols: [STREAM_PROTOCOL, `apikey.${API_KEY}`] });
      bySubprotocol.ws.once('upgrade', (res) => (answered = res.headers['sec-websocket-protocol'] as string));
      await bySubprotocol.opened();
      expect(answered).toBe(STREAM_PROTOCOL);
      expect(bySubprotocol.ws.protocol).toBe(STREAM_PROTOCOL);
      source.append(1);
      for (const client of [byHeader, byQuery, bySubprotocol]) {
        await until(() => client.sequences().length === 1, 'the live notification');
      }
      expect(wsStream.connectionCount()).toBe(3);
    });

    it('refuses a key in the subprotocol without the fixed protocol beside it, saying what to add', async () => {
      await start();
      const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${port}${STREAM_PATH}`, [`apikey.${API_KEY}`]);
        clients.push(ws);
        ws.on('error', () => undefined);
        ws.on('open', () => reject(new Error('the handshake was accepted')));
        ws.on('unexpected-response', (_req, r) => {
          let body = '';
          r.on('data', (c) => (body += c));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
        });
      });
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({ error: 'VALIDATION_FAILED', field: 'Sec-WebSocket-Protocol' });
      expect(res.body).toContain(STREAM_PROTOCOL);
      expect(res.body).not.toContain(API_KEY);
      expect(limiter.count()).toBe(0);
    });

    it('counts WebSockets and SSE streams of a key together, refuses past the cap with 429, and admits again once one closes', async () => {
      await start({ limits: { perKey: 3, perInstance: 10 } });
      const a = await connected();
      await connected(`?apiKey=${API_KEY}`, {});
      const s = await openSse();
      expect(s.res.statusCode).toBe(200);
      const over = await refusal('');
      expect(over).toMatchObject({ status: 429, body: { error: 'TOO_MANY_STREAMS', limit: 3, scope: 'key' } });
      const sseOver = await openSse();
      expect(sseOver.res.statusCode).toBe(429);
      a.ws.close();
      await a.closed;
      await until(() => limiter.count() === 2, 'the slot to come back');
      await connected();
      expect(limiter.count()).toBe(3);
    });

    it('refuses before the handshake with the service error body', async () => {
      await start();
      await expect(refusal('', {})).resolves.toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED' } });
      await expect(refusal('', { 'x-api-key': 'wrong' })).resolves.toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED' } });
      await expect(refusal('?apiKey=wrong', {})).resolves.toMatchObject({ status: 401 });
      await expect(refusal('', undefined, '/projections/unknown/stream')).resolves.toMatchObject({
        status: 404,
        body: { error: 'NOT_FOUND' },
      });
      for (const bad of ['-1', 'abc', '1.5', '', '1e3']) {
        await expect(refusal(`?afterSequence=${bad}`)).resolves.toMatchObject({ status: 400, body: { error: 'VALIDATION_FAILED' } });
      }
      await expect(refusal('', undefined, '/elsewhere')).resolves.toMatchObject({ status: 404, body: { error: 'NOT_FOUND' } });
      expect(wsStream.connectionCount()).toBe(0);
    });

    it('leaves other paths to another upgrade listener', async () => {
      await start();
      server.on('upgrade', (req: http.IncomingMessage, socket: Socket) => {
        if (req.url === '/elsewhere') socket.end('HTTP/1.1 418 I am a teapot\r\nContent-Length: 2\r\n\r\n{}');
      });
      await expect(refusal('', undefined, '/elsewhere')).resolves.toMatchObject({ status: 418 });
    });

    it('pings, keeps clients that pong (message or frame) and closes one that does not with 4000', async () => {
      await start({ ws: { pingIntervalMs: 100 } });
      const silent = await connected();
      const pongsByMessage = await connected();
      const pongsByFrame = await connected();
      pongsByMessage.ws.on('message', (data) => {
        if (JSON.parse(data.toString()).type === 'ping') pongsByMessage.ws.send(JSON.stringify({ type: 'pong' }));
      });
      pongsByFrame.ws.on('message', (data) => {
        if (JSON.parse(data.toString()).type === 'ping') pongsByFrame.ws.pong();
      });
      await expect(silent.closed).resolves.toEqual({ code: 4000, reason: 'ping timeout' });
      expect(silent.pings()).toBe(1);
      await elapse(350, 'more than a ping interval: the live sockets answer and stay open');
      for (const alive of [pongsByMessage, pongsByFrame]) {
        expect(alive.ws.readyState).toBe(WebSocket.OPEN);
        expect(alive.pings()).toBeGreaterThanOrEqual(4);
      }
    });

    it('closes a client that stops reading with 4008 and the sequence to resume after', async () => {
      await start({ ws: { maxBufferedBytes: 512 * 1024, pageSize: 10 } });
      // Far more than the kernel's socket buffers hold, so the server's own buffer has to grow.
      const total = 2000;
      source.append(total, JSON.stringify({ blob: 'x'.repeat(16 * 1024) }));
      const stalled = connect('?afterSequence=0');
      const socket = () => (stalled.ws as unknown as { _socket: Socket })._socket;
      stalled.ws.once('open', () => socket().pause());
      await stalled.opened();
      await elapse(500, 'the stalled socket stays paused while its buffer fills');
      socket().resume();
      const { code, reason } = await stalled.closed;
      expect(code).toBe(4008);
      const { code: reasonCode, resumeAfterSequence } = JSON.parse(reason) as { code: string; resumeAfterSequence: number };
      expect(reasonCode).toBe('SLOW_CONSUMER');
      expect(resumeAfterSequence).toBeLessThan(total);
      expect(stalled.sequences()).toEqual(range(1, resumeAfterSequence));

      const resumed = await connected(`?afterSequence=${resumeAfterSequence}`);
      await until(() => resumed.sequences().length >= total - resumeAfterSequence, 'the rest after resuming', 20_000);
      expect(resumed.sequences()).toEqual(range(resumeAfterSequence + 1, total));
    });

    it('closes with 4010 and the oldest kept sequence when the cursor has expired', async () => {
      await start();
      source.append(20);
      source.oldestKept = 11;
      const expired = connect('?afterSequence=3');
      await expect(expired.closed).resolves.toEqual({ code: 4010, reason: JSON.stringify({ code: 'CURSOR_EXPIRED', oldestSequence: 11 }) });
      expect(source.subscriberCount()).toBe(0);
      const justInTime = await connected('?afterSequence=10');
      await until(() => justInTime.sequences().length >= 10, 'the kept notifications');
      expect(justInTime.sequences()).toEqual(range(11, 20));
    });

    it('ignores invalid client messages but closes on one over maxPayload', async () => {
      await start();
      const client = await connected();
      client.ws.send('not json');
      client.ws.send('null');
      client.ws.send(Buffer.from([1, 2, 3]));
      client.ws.send(JSON.stringify({ type: 'subscribe' }));
      source.append(1);
      await until(() => client.sequences().length === 1, 'a notification after the junk');
      expect(client.ws.readyState).toBe(WebSocket.OPEN);
      client.ws.send('x'.repeat(5000));
      await expect(client.closed).resolves.toMatchObject({ code: 1009 });
    });

    it('close() closes every stream with 1001', async () => {
      await start();
      const a = await connected();
      const b = await connected();
      await wsStream.close();
      await expect(a.closed).resolves.toMatchObject({ code: 1001 });
      await expect(b.closed).resolves.toMatchObject({ code: 1001 });
      expect(wsStream.connectionCount()).toBe(0);
      expect(source.subscriberCount()).toBe(0);
    });
  });

  describe('SSE', () => {
    it('replays after afterSequence and goes live as state_changed events with the sequence as id', async () => {
      await start();
      source.append(12);
      source.readDelayMs = 10;
      let racingAppends = 3;
      source.onRead = (page) => {
        if (page.length === 0 && racingAppends-- > 0) source.append(1);
      };
      const stream = await openSse('?afterSequence=2');
      expect(stream.res.statusCode).toBe(200);
      expect(stream.res.headers).toMatchObject({
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        'x-accel-buffering': 'no',
      });
      for (let i = 0; i < 10; i++) {
        source.append(1);
        await elapse(3, 'writes land while the stream replays');
      }
      await until(() => stream.sequences().length >= 23, '23 events');
      await elapse(30, 'time for a repeat or a gap to show, which none may');
      expect(stream.sequences()).toEqual(range(3, 25));
      expect(stream.events[0]).toEqual({
        id: '3',
        event: 'state_changed',
        data: expect.any(String),
      });
      expect(JSON.parse(stream.events[0].data!)).toMatchObject({ type: 'state_changed', sequence: 3, state: { total: 1 } });
    });

    it('lets Last-Event-ID win over afterSequence, and starts at the head without either', async () => {
      await start();
      source.append(10);
      const reconnected = await openSse('?afterSequence=2', { 'last-event-id': '7' });
      const live = await openSse();
      await until(() => reconnected.sequences().length >= 3, 'the replay');
      source.append(1);
      await until(() => live.sequences().length >= 1, 'the live event');
      await until(() => reconnected.sequences().length >= 4, 'the live event');
      expect(reconnected.sequences()).toEqual([8, 9, 10, 11]);
      expect(live.sequences()).toEqual([11]);
    });

    it('sends a heartbeat comment', async () => {
      await start({ sse: { heartbeatMs: 50 } });
      const stream = await openSse();
      await until(() => stream.comments.length >= 2, 'two heartbeats');
      expect(stream.comments.slice(0, 2)).toEqual(['ping', 'ping']);
    });

    it('throws before writing anything when the projection is unknown, SSE is disabled or the cursor is invalid', async () => {
      await start();
      const disabled = await openSse('', {}, NO_SSE_PROJECTION);
      await disabled.ended;
      expect(disabled.res.statusCode).toBe(409);
      const unknown = await openSse('', {}, 'unknown');
      await unknown.ended;
      expect(unknown.res.statusCode).toBe(404);
      const invalid = await openSse('', { 'last-event-id': 'x' });
      await invalid.ended;
      expect(invalid.res.statusCode).toBe(400);
      expect(handleFailures.map((f) => [(f.err as DomainError).code, f.headersSent])).toEqual([
        ['SSE_DISABLED', false],
        ['NOT_FOUND', false],
        ['VALIDATION_FAILED', false],
      ]);
      expect(sse.connectionCount()).toBe(0);
    });

    it('ends with an error event naming the oldest kept sequence when the cursor has expired', async () => {
      await start();
      source.append(20);
      source.oldestKept = 11;
      const stream = await openSse('?afterSequence=3');
      await stream.ended;
      expect(stream.events).toEqual([{ event: 'error', data: JSON.stringify({ code: 'CURSOR_EXPIRED', oldestSequence: 11 }) }]);
      expect(source.subscriberCount()).toBe(0);
    });

    it('ends a client that stops reading with SLOW_CONSUMER and the sequence to resume after', async () => {
      await start({ sse: { maxBufferedBytes: 512 * 1024, pageSize: 10 } });
      const total = 2000;
      source.append(total, JSON.stringify({ blob: 'x'.repeat(16 * 1024) }));
      const stream = await openSse('?afterSequence=0');
      stream.res.socket.pause();
      await elapse(500, 'the paused socket fills its buffer');
      stream.res.socket.resume();
      await stream.ended;
      const last = stream.events[stream.events.length - 1];
      expect(last.event).toBe('error');
      const { code, resumeAfterSequence } = JSON.parse(last.data!) as { code: string; resumeAfterSequence: number };
      expect(code).toBe('SLOW_CONSUMER');
      expect(resumeAfterSequence).toBeLessThan(total);
      expect(stream.sequences()).toEqual(range(1, resumeAfterSequence));
    });

    it('stops on client disconnect and ends every stream on close()', async () => {
      await start();
      const leaving = await openSse();
      const staying = await openSse();
      await until(() => sse.connectionCount() === 2, 'both streams');
      leaving.res.destroy();
      await until(() => sse.connectionCount() === 1 && source.subscriberCount() === 1, 'the server to let go');
      sse.close();
      await staying.ended;
      expect(sse.connectionCount()).toBe(0);
      expect(source.subscriberCount()).toBe(0);
    });
  });
});
