import * as http from 'node:http';
import * as net from 'node:net';
import { Client, newTenant, RunningService, startService } from '../support/service-harness';

/**
 * Issue 25 item 6: a request refused before (or while) its body is read is answered, not reset.
 * Each refusal with real clients: Node's `http` client sending the body fast and slowly, and `fetch`.
 * One store is enough: nothing here reaches it.
 */
const OVER_LIMIT = 6 * 1024 * 1024; // the body limit is 4 MiB
const LINGER_MS = 1500;

interface Outcome {
  status?: number;
  body?: any;
  /** An error the client raised before it had the answer. */
  errorBeforeAnswer?: string;
  /** One raised after (the socket closed behind a client still sending). */
  errorAfterAnswer?: string;
  /** When the client saw its socket close, ms after the request began. */
  closedAfterMs: number;
}

/**
 * POSTs `total` bytes with node:http in `chunk`-byte writes, `pauseMs` apart (0: as fast as the
 * socket takes them); `chunked` leaves out the Content-Length. Resolves once the socket closed.
 */
function nodeHttpPost(
  url: string,
  headers: Record<string, string>,
  o: { total: number; chunk: number; pauseMs: number; chunked?: boolean },
): Promise<Outcome> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const out: Outcome = { closedAfterMs: -1 };
    const req = http.request(url, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', ...(o.chunked ? {} : { 'content-length': String(o.total) }), ...headers },
    });
    req.on('response', (res) => {
      out.status = res.statusCode;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => (out.body = text ? JSON.parse(text) : undefined));
      res.on('error', () => undefined);
    });
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (out.status === undefined) out.errorBeforeAnswer = e.code ?? e.message;
      else out.errorAfterAnswer = e.code ?? e.message;
    });
    req.on('close', () => {
      out.closedAfterMs = Date.now() - t0;
      // The response's body may still be in flight when the request closes: let it finish.
      setImmediate(() => resolve(out));
    });
    const piece = Buffer.alloc(o.chunk, 0x20);
    let sent = 0;
    const next = (): void => {
      if (req.destroyed) return;
      if (sent >= o.total) {
        req.end();
        return;
      }
      const n = Math.min(o.chunk, o.total - sent);
      sent += n;
      const ok = req.write(n === o.chunk ? piece : piece.subarray(0, n));
      if (o.pauseMs > 0) setTimeout(next, o.pauseMs);
      else if (ok) setImmediate(next);
      else req.once('drain', next);
    };
    next();
  });
}

async function fetchPost(url: string, headers: Record<string, string>, total: number): Promise<Outcome> {
  const t0 = Date.now();
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: Buffer.alloc(total, 0x20),
      signal: AbortSignal.timeout(30_000),
    });
    return { status: res.status, body: await res.json(), closedAfterMs: Date.now() - t0 };
  } catch (e) {
    const err = e as Error & { cause?: NodeJS.ErrnoException };
    return { errorBeforeAnswer: err.cause?.code ?? err.message, closedAfterMs: Date.now() - t0 };
  }
}

describe('a refused body is answered, not reset', () => {
  let svc: RunningService;
  let tenant: Client;

  beforeAll(async () => {
    svc = await startService({
      BODY_READ_TIMEOUT_MS: '1000',
      REFUSED_BODY_LINGER_MS: String(LINGER_MS),
      REFUSED_BODY_LINGER_BYTES: String(32 * 1024 * 1024),
    });
    tenant = await newTenant(svc.url, 'refused-body');
  }, 120_000);
  afterAll(() => svc?.close());

  const cases: { name: string; path: string; key: () => string | undefined; status: number; code: string }[] = [
    { name: '413 (body over the limit)', path: '/events', key: () => tenant.key, status: 413, code: 'PAYLOAD_TOO_LARGE' },
    { name: '401 (no key)', path: '/events', key: () => undefined, status: 401, code: 'UNAUTHORIZED' },
    {
      name: '404 (POST /reducers/no-such-route)',
      path: '/reducers/no-such-route',
      key: () => tenant.key,
      status: 404,
      code: 'NOT_FOUND',
    },
  ];
  const headersOf = (key: string | undefined): Record<string, string> => (key ? { 'x-api-key': key } : {});

  describe.each(cases)('$name', ({ path, key, status, code }) => {
    it('node:http sending the whole body fast sees the answer, with no error', async () => {
      const out = await nodeHttpPost(`${svc.url}${path}`, headersOf(key()), { total: OVER_LIMIT, chunk: 256 * 1024, pauseMs: 0 });
      expect(out).toMatchObject({ status, body: { error: code } });
      expect(out.errorBeforeAnswer).toBeUndefined();
      expect(out.errorAfterAnswer).toBeUndefined();
    }, 30_000);

    it('node:http sending it chunked (no Content-Length) sees the answer, with no error', async () => {
      const out = await nodeHttpPost(`${svc.url}${path}`, headersOf(key()), {
        total: OVER_LIMIT,
        chunk: 64 * 1024,
        pauseMs: 0,
        chunked: true,
      });
      expect(out).toMatchObject({ status, body: { error: code } });
      expect(out.errorBeforeAnswer).toBeUndefined();
      expect(out.errorAfterAnswer).toBeUndefined();
    }, 30_000);

    it('node:http sending it slowly (within the linger time) sees the answer, with no error', async () => {
      // 6 MiB in 48 writes 10 ms apart: about half a second.
      const out = await nodeHttpPost(`${svc.url}${path}`, headersOf(key()), { total: OVER_LIMIT, chunk: 128 * 1024, pauseMs: 10 });
      expect(out).toMatchObject({ status, body: { error: code } });
      expect(out.errorBeforeAnswer).toBeUndefined();
      expect(out.errorAfterAnswer).toBeUndefined();
    }, 30_000);

    it('fetch sees the answer, several at once', async () => {
      const outs = await Promise.all(Array.from({ length: 6 }, () => fetchPost(`${svc.url}${path}`, headersOf(key()), OVER_LIMIT)));
      for (const out of outs) expect(out).toMatchObject({ status, body: { error: code } });
    }, 60_000);
  });

  describe('408 (the body did not arrive within BODY_READ_TIMEOUT_MS)', () => {
    it('node:http trickling a small body past the deadline sees the answer, with no error', async () => {
      // 40 KiB in 1 KiB writes 35 ms apart: ~1.4 s, past the 1 s deadline, within the linger.
      const out = await nodeHttpPost(`${svc.url}/events`, headersOf(tenant.key), { total: 40 * 1024, chunk: 1024, pauseMs: 35 });
      expect(out).toMatchObject({ status: 408, body: { error: 'REQUEST_TIMEOUT' } });
      expect(out.errorBeforeAnswer).toBeUndefined();
      expect(out.errorAfterAnswer).toBeUndefined();
    }, 30_000);
  });

  describe('bounds', () => {
    it('a client that keeps sending after the answer is cut off once the linger time is up', async () => {
      // A raw socket that allows half-open, so it sees when the server closes (node:http closes its
      // own socket on a `Connection: close` answer): 1 KiB every 20 ms of a 100 MiB body.
      const out = await rawTrickle(svc.url, '/reducers/no-such-route', tenant.key, 100 * 1024 * 1024);
      expect(out.head).toMatch(/^HTTP\/1\.1 404 /);
      expect(out.serverClosedAfterMs).toBeGreaterThanOrEqual(LINGER_MS - 100);
      expect(out.serverClosedAfterMs).toBeLessThan(LINGER_MS + 5_000);
    }, 30_000);

    it('a body read in full is not held: the connection of an answered request closes at once', async () => {
      const out = await rawTrickle(svc.url, '/events', undefined, 100);
      expect(out.head).toMatch(/^HTTP\/1\.1 401 /);
      expect(out.serverClosedAfterMs).toBeLessThan(LINGER_MS);
    }, 30_000);
  });
});

/**
 * Sends the head of a POST announcing `total` bytes, then 1 KiB every 20 ms until the server
 * closes; the answer's first line and when the server closed (ms after the head was sent).
 */
function rawTrickle(
  url: string,
  path: string,
  key: string | undefined,
  total: number,
): Promise<{ head: string; serverClosedAfterMs: number }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port), allowHalfOpen: true });
    let text = '';
    let sent = 0;
    let t0 = 0;
    let timer: NodeJS.Timeout | undefined;
    const finish = () => {
      clearInterval(timer);
      socket.destroy();
      resolve({ head: text.split('\r\n')[0], serverClosedAfterMs: Date.now() - t0 });
    };
    socket.on('connect', () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\ncontent-length: ${total}\r\n` +
          (key ? `x-api-key: ${key}\r\n` : '') +
          '\r\n',
      );
      t0 = Date.now();
      const piece = Buffer.alloc(Math.min(1024, total), 0x20);
      socket.write(piece);
      sent += piece.length;
      timer = setInterval(() => {
        if (sent >= total || socket.destroyed || !socket.writable) return;
        socket.write(piece);
        sent += piece.length;
      }, 20);
    });
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => (text += c));
    socket.on('end', finish);
    socket.on('close', finish);
    socket.on('error', (e: NodeJS.ErrnoException) => (text ? finish() : reject(e)));
  });
}

describe('the byte bound', () => {
  let svc: RunningService;
  let tenant: Client;
  beforeAll(async () => {
    svc = await startService({ REFUSED_BODY_LINGER_MS: '20000', REFUSED_BODY_LINGER_BYTES: String(1024 * 1024) });
    tenant = await newTenant(svc.url, 'refused-bytes');
  }, 120_000);
  afterAll(() => svc?.close());

  it('a client sending far more than REFUSED_BODY_LINGER_BYTES after the answer is cut off long before the linger time', async () => {
    const out = await nodeHttpPost(
      `${svc.url}/reducers/no-such-route`,
      { 'x-api-key': tenant.key },
      {
        total: 512 * 1024 * 1024,
        chunk: 256 * 1024,
        pauseMs: 0,
      },
    );
    // Cut off: the client never finished its 512 MiB, well before the 20 s linger time.
    expect(out.errorBeforeAnswer ?? out.errorAfterAnswer).toBeDefined();
    expect(out.closedAfterMs).toBeLessThan(15_000);
  }, 30_000);
});

describe('429 (over the append-request quota, refused before the body is read)', () => {
  let svc: RunningService;
  let tenant: Client;
  beforeAll(async () => {
    svc = await startService({ QUOTA_APPEND_REQUESTS: '1/1h' });
    tenant = await newTenant(svc.url, 'refused-quota');
  }, 120_000);
  afterAll(() => svc?.close());

  it('node:http sending a large body fast sees the answer, with no error', async () => {
    expect((await tenant.post('/events', { aggregateId: 'q-1', eventType: 'E', data: {} })).status).toBe(201);
    const out = await nodeHttpPost(`${svc.url}/events`, { 'x-api-key': tenant.key }, { total: OVER_LIMIT, chunk: 256 * 1024, pauseMs: 0 });
    expect(out).toMatchObject({ status: 429, body: { error: 'RATE_LIMITED' } });
    expect(out.errorBeforeAnswer).toBeUndefined();
    expect(out.errorAfterAnswer).toBeUndefined();
  }, 30_000);
});
