import * as http from 'node:http';
import WebSocket from 'ws';

/** A real `ws` client collecting state_changed messages; answers pings with pongs. */
export class WsCollector {
  readonly messages: any[] = [];
  /** The same messages as the exact text received (for tests about exact numbers). */
  readonly raw: string[] = [];
  closeCode: number | null = null;
  closeReason = '';
  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const text = String(data);
      const m = JSON.parse(text);
      if (m.type === 'ping') socket.send(JSON.stringify({ type: 'pong' }));
      else {
        this.messages.push(m);
        this.raw.push(text);
      }
    });
    socket.on('close', (code, reason) => {
      this.closeCode = code;
      this.closeReason = String(reason);
    });
  }

  static open(baseUrl: string, projectionId: string, key: string, afterSequence?: number): Promise<WsCollector> {
    const q = afterSequence === undefined ? '' : `?afterSequence=${afterSequence}`;
    return WsCollector.openPath(baseUrl, `/projections/${encodeURIComponent(projectionId)}/stream${q}`, key);
  }

  /** The tenant's log stream (GET /events/stream): `query` as given, e.g. `?afterPosition=0&eventType=A`. */
  static openEvents(baseUrl: string, key: string, query = ''): Promise<WsCollector> {
    return WsCollector.openPath(baseUrl, `/events/stream${query}`, key);
  }

  static openPath(baseUrl: string, pathAndQuery: string, key: string): Promise<WsCollector> {
    const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}${pathAndQuery}`, { headers: key ? { 'x-api-key': key } : {} });
    const c = new WsCollector(socket);
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(c));
      socket.once('unexpected-response', (_req, res) =>
        reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode })),
      );
      socket.once('error', reject);
    });
  }

  sequences(): number[] {
    return this.messages.map((m) => m.sequence);
  }

  /** Event streams: the positions of the `event` messages received. */
  positions(): number[] {
    return this.messages.filter((m) => m.type === 'event').map((m) => m.position);
  }

  close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((r) => {
      this.socket.once('close', () => r());
      this.socket.close();
    });
  }
}

/** A plain HTTP client reading `text/event-stream`. */
export class SseCollector {
  /** `raw`: the data lines exactly as received (for tests about exact numbers). */
  readonly events: { id: string; event: string; data: any; raw: string }[] = [];
  comments = 0;
  status = 0;
  private req?: http.ClientRequest;

  static open(baseUrl: string, projectionId: string, key: string, headers: Record<string, string> = {}, query = ''): Promise<SseCollector> {
    return SseCollector.openPath(baseUrl, `/projections/${encodeURIComponent(projectionId)}/stream${query}`, key, headers);
  }

  /** The tenant's log stream (GET /events/stream). */
  static openEvents(baseUrl: string, key: string, query = '', headers: Record<string, string> = {}): Promise<SseCollector> {
    return SseCollector.openPath(baseUrl, `/events/stream${query}`, key, headers);
  }

  static openPath(baseUrl: string, pathAndQuery: string, key: string, headers: Record<string, string> = {}): Promise<SseCollector> {
    const c = new SseCollector();
    return new Promise((resolve, reject) => {
      const req = http.get(`${baseUrl}${pathAndQuery}`, {
        headers: { ...(key ? { 'x-api-key': key } : {}), accept: 'text/event-stream', ...headers },
      });
      c.req = req;
      req.on('error', (e) => (c.status ? undefined : reject(e)));
      req.on('response', (res) => {
        c.status = res.statusCode ?? 0;
        if (c.status !== 200) {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () =>
            reject(Object.assign(new Error(`SSE refused: ${c.status} ${body}`), { status: c.status, body: JSON.parse(body || '{}') })),
          );
          return;
        }
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          buf += d;
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            const ev = { id: '', event: 'message', data: '' };
            let isComment = true;
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) continue;
              isComment = false;
              const [k, ...rest] = line.split(':');
              const v = rest.join(':').replace(/^ /, '');
              if (k === 'id') ev.id = v;
              else if (k === 'event') ev.event = v;
              else if (k === 'data') ev.data += v;
            }
            if (isComment) c.comments++;
            else c.events.push({ ...ev, data: JSON.parse(ev.data), raw: ev.data });
          }
        });
        resolve(c);
      });
    });
  }

  sequences(): number[] {
    return this.events.filter((e) => e.event === 'state_changed').map((e) => Number(e.id));
  }

  /** Event streams: the ids (positions) of the `event` events received. */
  positions(): number[] {
    return this.events.filter((e) => e.event === 'event').map((e) => Number(e.id));
  }

  close(): void {
    this.req?.destroy();
  }
}
