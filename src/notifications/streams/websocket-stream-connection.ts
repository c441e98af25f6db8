import { RawData, WebSocket } from 'ws';
import { DomainError } from '../../common/domain-error';
import { StreamOptions } from './stream-options';
import { StreamTransport } from './stream-transport.port';
import { StreamWire } from './stream-wire';

/** Application close codes (4000-4999 are free for applications per RFC 6455). */
export const CLOSE_PING_TIMEOUT = 4000;
export const CLOSE_SLOW_CONSUMER = 4008;
export const CLOSE_CURSOR_EXPIRED = 4010;
/** The stream's API key was revoked or expired while it ran (checked every KEY_WATCH_MS). */
export const CLOSE_KEY_REVOKED = 4001;
const CLOSE_GOING_AWAY = 1001;
const CLOSE_INTERNAL_ERROR = 1011;

/**
 * One WebSocket client: its cursor's transport (a message per item), its keepalive and the reasons
 * it gets closed. Closing it stops what its cursor sends (send answers false); StreamHub lets go of
 * the cursor when the socket's 'close' comes (WebSocketStreamServer).
 */
export class WebSocketStreamConnection<T> implements StreamTransport<T> {
  private readonly pingTimer: NodeJS.Timeout;
  /** Cleared by any pong (message or frame); still set at the next ping means the client is gone. */
  private awaitingPong = false;
  private corked = false;

  constructor(
    private readonly ws: WebSocket,
    readonly tenantId: string,
    private readonly wire: StreamWire<T>,
    private readonly opts: Pick<StreamOptions, 'pingIntervalMs' | 'maxBufferedBytes'>,
  ) {
    this.pingTimer = setInterval(this.ping, opts.pingIntervalMs);
    // Protocol errors (e.g. a message over maxPayload) are reported here and then closed by ws itself.
    ws.on('error', () => undefined);
    ws.on('message', this.onMessage);
    ws.on('pong', this.onPong);
    ws.once('close', () => clearInterval(this.pingTimer));
  }

  /** Writes one item as a message (ws.send); false once over STREAM_MAX_BUFFERED_BYTES (closed with 4008) or not open. */
  send(item: T): boolean {
    if (this.ws.readyState !== WebSocket.OPEN) return false;
    this.corkUntilNextTick();
    this.ws.send(this.wire.text(item));
    if (this.ws.bufferedAmount <= this.opts.maxBufferedBytes) return true;
    // Everything up to this item is already queued ahead of the close frame, so the client has it all.
    this.close(CLOSE_SLOW_CONSUMER, JSON.stringify({ code: 'SLOW_CONSUMER', [this.wire.resumeField]: this.wire.numberOf(item) }));
    return false;
  }

  failed(err: unknown): void {
    if (err instanceof DomainError && err.code === 'CURSOR_EXPIRED') {
      this.close(CLOSE_CURSOR_EXPIRED, JSON.stringify({ code: 'CURSOR_EXPIRED', oldestSequence: err.details.oldestSequence }));
    } else {
      this.close(CLOSE_INTERNAL_ERROR, 'internal error');
    }
  }

  keyRevoked(): void {
    this.close(CLOSE_KEY_REVOKED, JSON.stringify({ code: 'KEY_REVOKED' }));
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
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(code, reason);
  }
}
