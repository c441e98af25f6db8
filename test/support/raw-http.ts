import * as net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from connect to the whole response. */
  afterMs: number;
}

/**
 * One TCP connection that writes exactly what a test says, when it says: headers that announce a
 * body that never comes, a body trickled byte by byte. Reads one HTTP/1.1 response (Content-Length
 * framed) and notices when the server closes.
 */
export class RawHttp {
  private readonly socket: net.Socket;
  private readonly started = Date.now();
  private buffer = Buffer.alloc(0);
  private waiting?: (r: RawResponse) => void;
  private parsed?: RawResponse;
  readonly closed: Promise<number>;

  constructor(url: string) {
    const { hostname, port } = new URL(url);
    this.socket = net.connect(Number(port), hostname);
    this.socket.on('error', () => undefined); // a reset is an outcome the tests look at, not a failure
    this.socket.on('data', (chunk) => this.onData(chunk));
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve(Date.now() - this.started)));
  }

  get isClosed(): boolean {
    return this.socket.destroyed;
  }

  write(text: string | Buffer): void {
    if (!this.socket.destroyed) this.socket.write(text);
  }

  /** The request line and headers of a POST, and optionally the start of its body. */
  startPost(path: string, headers: Record<string, string>, bodyStart = ''): void {
    const lines = [`POST ${path} HTTP/1.1`, 'Host: test', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    this.write(`${lines.join('\r\n')}\r\n\r\n${bodyStart}`);
  }

  response(timeoutMs = 30_000): Promise<RawResponse> {
    if (this.parsed) return Promise.resolve(this.parsed);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no response within ${timeoutMs} ms`)), timeoutMs);
      this.waiting = (r) => {
        clearTimeout(timer);
        resolve(r);
      };
    });
  }

  /** Whether no response has arrived by now. */
  get unanswered(): boolean {
    return this.parsed === undefined;
  }

  destroy(): void {
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    if (this.parsed) return;
    const end = this.buffer.indexOf('\r\n\r\n');
    if (end < 0) return;
    const [statusLine, ...lines] = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (this.buffer.length < end + 4 + length) return;
    this.parsed = {
      status: Number(statusLine.split(' ')[1]),
      headers,
      body: this.buffer.subarray(end + 4, end + 4 + length).toString('utf8'),
      afterMs: Date.now() - this.started,
    };
    this.waiting?.(this.parsed);
  }
}
