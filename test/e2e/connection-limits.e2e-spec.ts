import * as http from 'node:http';
import WebSocket from 'ws';
import { ADMIN_TOKEN, Client, clientFor, newTenant, request, startService } from '../support/service-harness';
import { exampleSources } from '../support/runtime-harness';
import { RawHttp } from '../support/raw-http';
import { StreamLimiter } from '../../src/notifications/streams/stream-limiter';
import { zipSources } from '../support/zip-writer';
import { elapse, until } from '../support/wait';

jest.setTimeout(120_000);

const BODY_READ_TIMEOUT_MS = 1000;
const REQUEST_TIMEOUT_MS = 2000;
/**
 * When a socket still trickling after its 408 is gone at the latest: the answer lingers while the
 * client sends (refused-body-linger.ts) until Node's whole-request deadline cuts it, which Node
 * checks once a second (connectionsCheckingInterval in app.factory.ts), plus a scheduling margin.
 */
const TRICKLER_CLOSED_BY_MS = REQUEST_TIMEOUT_MS + 1000 + 500;
const CONNECTION_TIMEOUT_MS = 2500;
const PER_KEY = 3;
const PER_INSTANCE = 5;

/** An open WebSocket that answers pings, or the HTTP refusal of its upgrade. */
function openWs(url: string, path: string, options: { key?: string; protocols?: string[] } = {}) {
  const ws = new WebSocket(
    `${url.replace(/^http/, 'ws')}${path}`,
    options.protocols ?? [],
    options.key ? { headers: { 'x-api-key': options.key } } : {},
  );
  const messages: any[] = [];
  ws.on('message', (d) => {
    const m = JSON.parse(String(d));
    if (m.type === 'ping') ws.send(JSON.stringify({ type: 'pong' }));
    else messages.push(m);
  });
  return new Promise<
    | { ok: true; ws: WebSocket; messages: any[]; responseHeaders: http.IncomingHttpHeaders }
    | { ok: false; status: number; headers: http.IncomingHttpHeaders; body: any }
  >((resolve, reject) => {
    let responseHeaders: http.IncomingHttpHeaders = {};
    ws.once('upgrade', (res) => (responseHeaders = res.headers));
    ws.once('open', () => resolve({ ok: true, ws, messages, responseHeaders }));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ ok: false, status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(body) }));
    });
    ws.once('error', reject);
  });
}

/** A server-sent-events request: its status, and the events it delivers while open. */
function openSse(url: string, path: string, key: string) {
  return new Promise<{
    status: number;
    headers: http.IncomingHttpHeaders;
    body: string;
    req: http.ClientRequest;
    res: http.IncomingMessage;
  }>((resolve, reject) => {
    const req = http.get(`${url}${path}`, { headers: { 'x-api-key': key, accept: 'text/event-stream' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      const result = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        req,
        res,
        get body() {
          return body;
        },
      };
      if (res.statusCode === 200) resolve(result);
      else res.on('end', () => resolve(result));
    });
    req.on('error', reject);
  });
}

async function deployedProjection(c: Client, url: string): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([zipSources(exampleSources('customer-totals'))]), 'p.zip');
  form.append('config', JSON.stringify({ sse: true }));
  const up = (await (
    await fetch(`${url}/projections/upload`, { method: 'POST', headers: { 'x-api-key': c.key }, body: form })
  ).json()) as any;
  const st = await until(
    () => c.get(`/projections/${up.uploadId}/status`),
    (r) => r.body?.status === 'compiled' && Boolean(r.body.projectionId),
  );
  return st.body.projectionId;
}

const placeOrder = (c: Client, n: number) =>
  c.post('/events', {
    aggregateId: `order-${n}`,
    eventType: 'OrderPlaced',
    data: { customerId: 'cust-1', lines: [{ sku: 'x', qty: 1, price: 2 }] },
  });

describe('limits on connections over real HTTP', () => {
  let svc: Awaited<ReturnType<typeof startService>>;
  let t: Client;
  let projectionId: string;

  beforeAll(async () => {
    svc = await startService({
      BODY_READ_TIMEOUT_MS: String(BODY_READ_TIMEOUT_MS),
      REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      HEADERS_TIMEOUT_MS: '1000',
      CONNECTION_TIMEOUT_MS: String(CONNECTION_TIMEOUT_MS),
      // Quieter than the connection timeout: a stream must not need traffic to stay open.
      STREAM_PING_MS: '4000',
      SSE_HEARTBEAT_MS: '4000',
      STREAM_MAX_PER_KEY: String(PER_KEY),
      STREAM_MAX_PER_INSTANCE: String(PER_INSTANCE),
      LANE_SWEEP_MS: '200',
    });
    t = await newTenant(svc.url, 'limits');
    projectionId = await deployedProjection(t, svc.url);
  }, 120_000);
  afterAll(() => svc?.close());

  describe('a body that does not arrive', () => {
    it('is answered 408 REQUEST_TIMEOUT within the body deadline and its connection closed', async () => {
      const raw = new RawHttp(svc.url);
      raw.startPost('/events', { 'x-api-key': t.key, 'content-type': 'application/json', 'content-length': '100000' }, '{"aggregateId":');
      const trickle = setInterval(() => raw.write(' '), 100);
      try {
        const res = await raw.response(10_000);
        expect(res.status).toBe(408);
        expect(JSON.parse(res.body)).toEqual({ error: 'REQUEST_TIMEOUT', message: expect.stringContaining('did not fully arrive') });
        expect(res.headers.connection).toBe('close');
        expect(res.afterMs).toBeGreaterThanOrEqual(BODY_READ_TIMEOUT_MS - 50);
        expect(res.afterMs).toBeLessThan(BODY_READ_TIMEOUT_MS + 1500);
        expect(await raw.closed).toBeLessThan(TRICKLER_CLOSED_BY_MS);
      } finally {
        clearInterval(trickle);
        raw.destroy();
      }
    });

    it('cuts a multipart upload that trickles, too', async () => {
      const raw = new RawHttp(svc.url);
      const part = '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.zip"\r\n\r\nPK';
      raw.startPost(
        '/reducers/upload',
        { 'x-api-key': t.key, 'content-type': 'multipart/form-data; boundary=xyz', 'content-length': '100000' },
        part,
      );
      const trickle = setInterval(() => raw.write('a'), 100);
      try {
        const res = await raw.response(10_000);
        expect(res.status).toBe(408);
        expect(JSON.parse(res.body).error).toBe('REQUEST_TIMEOUT');
        expect(await raw.closed).toBeLessThan(TRICKLER_CLOSED_BY_MS);
      } finally {
        clearInterval(trickle);
      }
    });

    it('answers headers that do not arrive within HEADERS_TIMEOUT_MS in the same error format, and closes', async () => {
      const raw = new RawHttp(svc.url);
      raw.write('GET /auth/whoami HTTP/1.1\r\nHost: test\r\n');
      const trickle = setInterval(() => raw.write('X-Filler: 1\r\n'), 200);
      try {
        const res = await raw.response(10_000);
        expect(res.status).toBe(408);
        expect(JSON.parse(res.body)).toEqual({ error: 'REQUEST_TIMEOUT', message: 'the request did not fully arrive in time' });
        // The deadline, plus up to one pass of Node's once-a-second check.
        expect(res.afterMs).toBeLessThan(1000 + 1000 + 1000);
        await raw.closed;
      } finally {
        clearInterval(trickle);
        raw.destroy();
      }
    });

    it('does not cut a body that arrived in time but was not read yet because the event loop was busy', async () => {
      const body = JSON.stringify({ aggregateId: 'lagged-1', eventType: 'Noted', data: {} });
      const raw = new RawHttp(svc.url);
      raw.startPost('/events', {
        'x-api-key': t.key,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
      });
      await elapse(100, 'the headers are in: the deadline runs');
      raw.write(body); // in the server's socket buffer at once...
      // ...but this process (the server's too) is blocked past the body deadline (not past the
      // connection or request timeouts, which Node would apply the same way).
      const until = Date.now() + BODY_READ_TIMEOUT_MS + 300;
      while (Date.now() < until);
      expect((await raw.response(5000)).status).toBe(201);
      raw.destroy();
    });

    it('does not stop a body that arrives in time, slowly', async () => {
      const body = JSON.stringify({ aggregateId: 'slow-1', eventType: 'Noted', data: { text: 'x'.repeat(200) } });
      const raw = new RawHttp(svc.url);
      raw.startPost('/events', {
        'x-api-key': t.key,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
      });
      for (let i = 0; i < body.length; i += 50) {
        raw.write(body.slice(i, i + 50));
        await elapse(40, 'a body dripped slowly, 50 bytes every 40 ms');
      }
      const res = await raw.response();
      expect(res.status).toBe(201);
      raw.destroy();
    });
  });

  describe('credentials are checked before the body is read', () => {
    const bodyless = (headers: Record<string, string>, path = '/events') => {
      const raw = new RawHttp(svc.url);
      raw.startPost(path, { 'content-type': 'application/json', 'content-length': '4000000', ...headers });
      return raw;
    };

    it('answers a missing or wrong key at once, with the body announced and never sent, and closes', async () => {
      for (const headers of [{}, { 'x-api-key': 'esk_not-a-key' }] as Record<string, string>[]) {
        const raw = bodyless(headers);
        const res = await raw.response(5000);
        expect(res.status).toBe(401);
        expect(JSON.parse(res.body).error).toBe('UNAUTHORIZED');
        expect(res.afterMs).toBeLessThan(BODY_READ_TIMEOUT_MS / 2);
        expect(res.headers.connection).toBe('close');
        await raw.closed;
      }
    });

    it('waits for the body of an authenticated request (the deadline, not the credentials, ends it)', async () => {
      const raw = bodyless({ 'x-api-key': t.key });
      await elapse(BODY_READ_TIMEOUT_MS / 2, 'half the body deadline: past the credentials check, inside the deadline');
      expect(raw.unanswered).toBe(true);
      expect((await raw.response(5000)).status).toBe(408);
      raw.destroy();
    });

    it('checks the admin token before the body of an admin request', async () => {
      const wrong = bodyless({ authorization: 'Bearer not-the-token-at-all' }, '/admin/tenants');
      const res = await wrong.response(5000);
      expect(res.status).toBe(401);
      expect(res.afterMs).toBeLessThan(BODY_READ_TIMEOUT_MS / 2);
      const right = bodyless({ authorization: `Bearer ${ADMIN_TOKEN}` }, '/admin/tenants');
      await elapse(BODY_READ_TIMEOUT_MS / 2, 'half the body deadline: past the credentials check, inside the deadline');
      expect(right.unanswered).toBe(true);
      right.destroy();
      wrong.destroy();
    });

    it('keeps public routes public, the admin API on its token and unknown routes 404 without reading a body', async () => {
      expect(await request(`${svc.url}/health`, 'GET')).toEqual({ status: 200, body: { status: 'ok' } });
      const list = await request(`${svc.url}/admin/tenants`, 'GET', undefined, { authorization: `Bearer ${ADMIN_TOKEN}` });
      expect(list.status).toBe(200);
      const asTenant = await request(`${svc.url}/admin/tenants`, 'GET', undefined, { 'x-api-key': t.key });
      expect(asTenant.status).toBe(401);
      const unknown = bodyless({}, '/no/such/route');
      const res = await unknown.response(5000);
      expect(res.status).toBe(404);
      expect(JSON.parse(res.body).error).toBe('NOT_FOUND');
      expect(res.afterMs).toBeLessThan(BODY_READ_TIMEOUT_MS / 2);
      expect((await t.get('/auth/whoami')).body.tenantId).toBe(t.tenantId);
    });
  });

  describe('streams are long-lived', () => {
    it('keeps WebSocket and SSE streams open past the connection timeout while an idle socket is closed', async () => {
      const idle = new RawHttp(svc.url);
      const ws = await openWs(svc.url, `/projections/${projectionId}/stream`, { key: t.key });
      const sse = await openSse(svc.url, `/projections/${projectionId}/stream`, t.key);
      expect(ws.ok && sse.status).toBe(200);
      let wsClosed = false;
      if (ws.ok) ws.ws.on('close', () => (wsClosed = true));
      let sseClosed = false;
      sse.res.on('close', () => (sseClosed = true));

      expect(await idle.closed).toBeLessThan(CONNECTION_TIMEOUT_MS + 2000);
      await elapse(3 * CONNECTION_TIMEOUT_MS, 'three idle timeouts');
      expect(wsClosed).toBe(false);
      expect(sseClosed).toBe(false);
      expect((await placeOrder(t, 1)).status).toBe(201);
      if (!ws.ok) throw new Error('not open');
      await until(
        () => ws.messages.length,
        (n) => n >= 1,
      );
      await until(
        () => sse.body,
        (b) => b.includes('event: state_changed'),
      );
      ws.ws.close();
      sse.req.destroy();
      await until(
        () => svc.app.get(StreamLimiter).count(),
        (n) => n === 0,
        5000,
      );
    });
  });

  describe('stream caps', () => {
    const path = () => `/projections/${projectionId}/stream`;

    it('counts WebSockets and SSE of one key together, refuses the next with 429 before the handshake, and admits again once one closes', async () => {
      const a = await openWs(svc.url, path(), { key: t.key });
      const b = await openWs(svc.url, path(), { key: t.key });
      const c = await openSse(svc.url, path(), t.key);
      expect([a.ok, b.ok, c.status]).toEqual([true, true, 200]);

      const ws4 = await openWs(svc.url, path(), { key: t.key });
      if (ws4.ok) throw new Error('a fourth stream was admitted');
      expect(ws4.status).toBe(429);
      expect(ws4.headers['retry-after']).toBe('5');
      expect(ws4.body).toEqual({
        error: 'TOO_MANY_STREAMS',
        message: expect.stringContaining('STREAM_MAX_PER_KEY'),
        limit: PER_KEY,
        scope: 'key',
      });
      const sse4 = await openSse(svc.url, path(), t.key);
      expect(sse4.status).toBe(429);
      expect(sse4.headers['retry-after']).toBe('5');
      expect(JSON.parse(sse4.body)).toMatchObject({ error: 'TOO_MANY_STREAMS', limit: PER_KEY, scope: 'key' });

      if (a.ok) a.ws.close();
      const again = await until(
        () => openSse(svc.url, path(), t.key),
        (r) => r.status === 200 || (r.req.destroy(), false),
        5000,
      );
      expect(again.status).toBe(200);

      // A second key of the same tenant has a cap of its own; the instance cap (5) is shared.
      const issued = await request(`${svc.url}/admin/tenants/${t.tenantId}/keys`, 'POST', undefined, {
        authorization: `Bearer ${ADMIN_TOKEN}`,
      });
      const other = clientFor(svc.url, issued.body.apiKey, t.tenantId);
      const d = await openWs(svc.url, path(), { key: other.key });
      const e = await openWs(svc.url, path(), { key: other.key });
      expect([d.ok, e.ok]).toEqual([true, true]);
      const f = await openWs(svc.url, path(), { key: other.key });
      if (f.ok) throw new Error('a sixth stream was admitted on the instance');
      expect(f).toMatchObject({ status: 429, body: { error: 'TOO_MANY_STREAMS', limit: PER_INSTANCE, scope: 'instance' } });

      for (const s of [b, d, e]) if (s.ok) s.ws.close();
      c.req.destroy();
      again.req.destroy();
      // Everything given back: the full allowance is there again.
      const reopened = await until(
        async () => Promise.all([1, 2, 3].map(() => openWs(svc.url, path(), { key: t.key }))),
        (rs) => rs.every((r) => r.ok) || (rs.forEach((r) => r.ok && r.ws.close()), false),
        5000,
      );
      for (const r of reopened) if (r.ok) r.ws.close();
      await until(
        () => svc.app.get(StreamLimiter).count(),
        (n) => n === 0,
        5000,
      );
    });
  });

  describe('the key in a WebSocket subprotocol', () => {
    it('is accepted, but the answer is the fixed protocol and no response header carries the key', async () => {
      const res = await openWs(svc.url, `/projections/${projectionId}/stream`, { protocols: ['eventstore.v1', `apikey.${t.key}`] });
      if (!res.ok) throw new Error(`refused: ${res.status}`);
      expect(res.responseHeaders['sec-websocket-protocol']).toBe('eventstore.v1');
      expect(JSON.stringify(res.responseHeaders)).not.toContain(t.key);
      res.ws.close();
    });

    it('without the fixed protocol beside it is refused with 400 saying what to add', async () => {
      const res = await openWs(svc.url, `/projections/${projectionId}/stream`, { protocols: [`apikey.${t.key}`] });
      if (res.ok) throw new Error('admitted');
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        error: 'VALIDATION_FAILED',
        field: 'Sec-WebSocket-Protocol',
        message: expect.stringContaining("'eventstore.v1'"),
      });
      expect(JSON.stringify(res)).not.toContain(t.key);
    });
  });
});
