import { Socket } from 'net';
import http from 'http';
import { WebSocket } from 'ws';
import { API_KEY, PROJECTION, range, STREAM_PATH, TransportsHarness, until } from '../../../test/support/stream-transport-fakes';
import { elapse } from '../../../test/support/wait';
import { STREAM_PROTOCOL } from './websocket-handshake';

let h: TransportsHarness;
afterEach(() => h.stop());

describe('WebSocket', () => {
  it('replays the backlog and goes live with no gap and no duplicate at the seam', async () => {
    h = await TransportsHarness.start();
    h.source.append(30);
    h.source.readDelayMs = 15;
    // The narrowest seam: a write while the read that found the backlog exhausted is in flight.
    let racingAppends = 5;
    h.source.onRead = (page) => {
      if (page.length === 0 && racingAppends-- > 0) h.source.append(1);
    };
    const client = await h.connected('?afterSequence=0');
    // And writes landing anywhere while pages are being read.
    for (let i = 0; i < 40; i++) {
      h.source.append(1);
      await elapse(3, 'writes land while pages are being read');
    }
    await until(() => client.sequences().length >= 75, '75 notifications');
    await elapse(50, 'time for a repeat or a gap to show, which none may');
    expect(client.sequences()).toEqual(range(1, 75));
    expect(racingAppends).toBeLessThan(0);
    expect(h.source.maxReadsInFlight).toBe(1);
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
    h = await TransportsHarness.start();
    h.source.append(5);
    const client = await h.connected();
    h.source.append(2);
    await until(() => client.sequences().length >= 2, 'live notifications');
    await elapse(30, 'time for a repeat to show, which none may');
    expect(client.sequences()).toEqual([6, 7]);
  });

  it('resumes with afterSequence after a disconnect and releases the subscription', async () => {
    h = await TransportsHarness.start();
    h.source.append(10);
    const first = await h.connected('?afterSequence=0');
    await until(() => first.sequences().length >= 10, 'the backlog');
    first.ws.close();
    await first.closed;
    await until(() => h.ws.connectionCount() === 0 && h.openCursors() === 0, 'the server to let go');
    h.source.append(5);
    const second = await h.connected('?afterSequence=10');
    await until(() => second.sequences().length >= 5, 'the rest');
    await elapse(30, 'time for a repeat to show, which none may');
    expect(second.sequences()).toEqual(range(11, 15));
    expect(h.ws.connectionCount()).toBe(1);
  });

  it('accepts the API key as header, as apiKey query parameter and as apikey.<key> subprotocol, answering the fixed protocol', async () => {
    h = await TransportsHarness.start();
    const byHeader = await h.connected();
    const byQuery = await h.connected(`?apiKey=${API_KEY}`, {});
    let answered: string | undefined;
    const bySubprotocol = h.connect('', { protocols: [STREAM_PROTOCOL, `apikey.${API_KEY}`] });
    bySubprotocol.ws.once('upgrade', (res) => (answered = res.headers['sec-websocket-protocol'] as string));
    await bySubprotocol.opened();
    expect(answered).toBe(STREAM_PROTOCOL);
    expect(bySubprotocol.ws.protocol).toBe(STREAM_PROTOCOL);
    h.source.append(1);
    for (const client of [byHeader, byQuery, bySubprotocol]) {
      await until(() => client.sequences().length === 1, 'the live notification');
    }
    expect(h.ws.connectionCount()).toBe(3);
  });

  it('refuses a key in the subprotocol without the fixed protocol beside it, saying what to add', async () => {
    h = await TransportsHarness.start();
    const res = await h.refusal('', {}, STREAM_PATH, [`apikey.${API_KEY}`]);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'VALIDATION_FAILED', field: 'Sec-WebSocket-Protocol' });
    expect(res.text).toContain(STREAM_PROTOCOL);
    expect(res.text).not.toContain(API_KEY);
    expect(h.limiter.count()).toBe(0);
  });

  it('counts WebSockets and SSE streams of a key together, refuses past the cap with 429, and admits again once one closes', async () => {
    h = await TransportsHarness.start({ limits: { perKey: 3, perInstance: 10 } });
    const a = await h.connected();
    await h.connected(`?apiKey=${API_KEY}`, {});
    const s = await h.openSse();
    expect(s.res.statusCode).toBe(200);
    const over = await h.refusal('');
    expect(over).toMatchObject({ status: 429, body: { error: 'TOO_MANY_STREAMS', limit: 3, scope: 'key' } });
    const sseOver = await h.openSse();
    expect(sseOver.res.statusCode).toBe(429);
    a.ws.close();
    await a.closed;
    await until(() => h.limiter.count() === 2, 'the slot to come back');
    await h.connected();
    expect(h.limiter.count()).toBe(3);
  });

  it('refuses before the handshake with the service error body', async () => {
    h = await TransportsHarness.start();
    await expect(h.refusal('', {})).resolves.toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED' } });
    await expect(h.refusal('', { 'x-api-key': 'wrong' })).resolves.toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED' } });
    await expect(h.refusal('?apiKey=wrong', {})).resolves.toMatchObject({ status: 401 });
    await expect(h.refusal('', undefined, '/projections/unknown/stream')).resolves.toMatchObject({
      status: 404,
      body: { error: 'NOT_FOUND' },
    });
    for (const bad of ['-1', 'abc', '1.5', '', '1e3']) {
      await expect(h.refusal(`?afterSequence=${bad}`)).resolves.toMatchObject({ status: 400, body: { error: 'VALIDATION_FAILED' } });
    }
    await expect(h.refusal('', undefined, '/elsewhere')).resolves.toMatchObject({ status: 404, body: { error: 'NOT_FOUND' } });
    expect(h.ws.connectionCount()).toBe(0);
  });

  it('leaves other paths to another upgrade listener', async () => {
    h = await TransportsHarness.start();
    h.http.on('upgrade', (req: http.IncomingMessage, socket: Socket) => {
      if (req.url === '/elsewhere') socket.end('HTTP/1.1 418 I am a teapot\r\nContent-Length: 2\r\n\r\n{}');
    });
    await expect(h.refusal('', undefined, '/elsewhere')).resolves.toMatchObject({ status: 418 });
  });

  it('pings, keeps clients that pong (message or frame) and closes one that does not with 4000', async () => {
    h = await TransportsHarness.start({ options: { pingIntervalMs: 100 } });
    const silent = await h.connected();
    const pongsByMessage = await h.connected();
    const pongsByFrame = await h.connected();
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
    h = await TransportsHarness.start({ options: { maxBufferedBytes: 512 * 1024, pageSize: 10 } });
    // Far more than the kernel's socket buffers hold, so the server's own buffer has to grow.
    const total = 2000;
    h.source.append(total, JSON.stringify({ blob: 'x'.repeat(16 * 1024) }));
    const stalled = h.connect('?afterSequence=0');
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

    const resumed = await h.connected(`?afterSequence=${resumeAfterSequence}`);
    await until(() => resumed.sequences().length >= total - resumeAfterSequence, 'the rest after resuming', 20_000);
    expect(resumed.sequences()).toEqual(range(resumeAfterSequence + 1, total));
  });

  it('closes with 4010 and the oldest kept sequence when the cursor has expired', async () => {
    h = await TransportsHarness.start();
    h.source.append(20);
    h.source.oldestKept = 11;
    const expired = h.connect('?afterSequence=3');
    await expect(expired.closed).resolves.toEqual({ code: 4010, reason: JSON.stringify({ code: 'CURSOR_EXPIRED', oldestSequence: 11 }) });
    // The hub lets go of the cursor when the server's side of the socket has closed too.
    await until(() => h.openCursors() === 0, 'the hub to let go');
    const justInTime = await h.connected('?afterSequence=10');
    await until(() => justInTime.sequences().length >= 10, 'the kept notifications');
    expect(justInTime.sequences()).toEqual(range(11, 20));
  });

  it('ignores invalid client messages but closes on one over maxPayload', async () => {
    h = await TransportsHarness.start();
    const client = await h.connected();
    client.ws.send('not json');
    client.ws.send('null');
    client.ws.send(Buffer.from([1, 2, 3]));
    client.ws.send(JSON.stringify({ type: 'subscribe' }));
    h.source.append(1);
    await until(() => client.sequences().length === 1, 'a notification after the junk');
    expect(client.ws.readyState).toBe(WebSocket.OPEN);
    client.ws.send('x'.repeat(5000));
    await expect(client.closed).resolves.toMatchObject({ code: 1009 });
  });

  it('close() closes every stream with 1001', async () => {
    h = await TransportsHarness.start();
    const a = await h.connected();
    const b = await h.connected();
    await h.ws.close();
    await expect(a.closed).resolves.toMatchObject({ code: 1001 });
    await expect(b.closed).resolves.toMatchObject({ code: 1001 });
    expect(h.ws.connectionCount()).toBe(0);
    expect(h.openCursors()).toBe(0);
  });
});
