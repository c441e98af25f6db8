import * as http from 'node:http';
import WebSocket from 'ws';
import { elapse } from './wait';

/** One state_changed message as a client saw it, with when it arrived (for ack → notification times). */
export interface Seen {
  sequence: number;
  aggregateId: string;
  version: number;
  stateKey: string;
  at: number;
}

/**
 * A notification stream (WebSocket or SSE) that, whenever its connection ends (the instance was
 * killed or stopped), reconnects to the next instance of `urls` with `afterSequence` = the last
 * sequence it received — what a client of several instances behind a load balancer does. Every
 * message received on every connection is kept in `seen`, so a gap or a duplicate across
 * reconnects shows up there.
 */
export class RoamingStream {
  readonly seen: Seen[] = [];
  reconnects = 0;
  private index: number;
  private closed = false;
  private ws?: WebSocket;
  private req?: http.ClientRequest;

  constructor(
    readonly transport: 'websocket' | 'sse',
    private readonly urls: () => string[],
    startAt: number,
    private readonly projectionId: string,
    private readonly key: string,
  ) {
    this.index = startAt;
  }

  get lastSequence(): number {
    return this.seen.length ? this.seen[this.seen.length - 1].sequence : 0;
  }

  sequences(): number[] {
    return this.seen.map((s) => s.sequence);
  }

  /** Connects (to the first instance that accepts, in turn); resolves once a connection is open. */
  async open(): Promise<void> {
    for (let attempt = 0; !this.closed; attempt++) {
      const url = this.urls()[this.index % this.urls().length];
      try {
        await (this.transport === 'websocket' ? this.openWs(url) : this.openSse(url));
        return;
      } catch {
        // That instance is down (or not yet listening): the next one.
        this.index++;
        await elapse(Math.min(200, 20 * (attempt + 1)), 'a reconnect backoff, as a client would');
      }
    }
  }

  close(): void {
    this.closed = true;
    this.ws?.terminate();
    this.req?.destroy();
  }

  private dropped(): void {
    if (this.closed) return;
    this.reconnects++;
    this.index++;
    void this.open();
  }

  private record(m: any): void {
    this.seen.push({ sequence: m.sequence, aggregateId: m.aggregateId, version: m.version, stateKey: m.stateKey, at: Date.now() });
  }

  private openWs(base: string): Promise<void> {
    const url = `${base.replace(/^http/, 'ws')}/projections/${encodeURIComponent(this.projectionId)}/stream?afterSequence=${this.lastSequence}`;
    const socket = new WebSocket(url, { headers: { 'x-api-key': this.key } });
    return new Promise((resolve, reject) => {
      let opened = false;
      socket.on('message', (data) => {
        const m = JSON.parse(String(data));
        if (m.type === 'ping') socket.send(JSON.stringify({ type: 'pong' }));
        else if (m.type === 'state_changed') this.record(m);
      });
      socket.once('open', () => {
        opened = true;
        this.ws = socket;
        resolve();
      });
      socket.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
      socket.on('error', (e) => (opened ? undefined : reject(e)));
      socket.once('close', () => {
        if (opened) this.dropped();
      });
    });
  }

  private openSse(base: string): Promise<void> {
    const url = `${base}/projections/${encodeURIComponent(this.projectionId)}/stream?afterSequence=${this.lastSequence}`;
    return new Promise((resolve, reject) => {
      const req = http.get(url, { headers: { 'x-api-key': this.key, accept: 'text/event-stream' } });
      let opened = false;
      req.on('error', (e) => (opened ? undefined : reject(e)));
      req.on('response', (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`SSE refused: ${res.statusCode}`));
          return;
        }
        opened = true;
        this.req = req;
        resolve();
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          buf += d;
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            let event = 'message';
            let data = '';
            for (const line of block.split('\n')) {
              if (line.startsWith('event:')) event = line.slice(6).trim();
              else if (line.startsWith('data:')) data += line.slice(5).replace(/^ /, '');
            }
            if (event === 'state_changed' && data) this.record(JSON.parse(data));
          }
        });
        // A killed instance resets the connection, a stopped one ends it: either way, the next instance.
        let gone = false;
        const end = () => {
          if (gone) return;
          gone = true;
          this.dropped();
        };
        res.on('end', end);
        res.on('close', end);
        res.on('error', end);
      });
    });
  }
}
