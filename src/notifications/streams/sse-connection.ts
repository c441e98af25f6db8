import { ServerResponse } from 'http';
import { DomainError } from '../../common/domain-error';
import { StreamOptions } from './stream-options';
import { StreamTransport } from './stream-transport.port';
import { StreamWire } from './stream-wire';

/**
 * One server-sent events client: its cursor's transport (an event per item, the number as its id)
 * and its heartbeat. Ending it stops what its cursor sends (send answers false); StreamHub lets go
 * of the cursor when the response's 'close' comes (SseStream).
 */
export class SseConnection<T> implements StreamTransport<T> {
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    private readonly res: ServerResponse,
    readonly tenantId: string,
    private readonly wire: StreamWire<T>,
    private readonly opts: Pick<StreamOptions, 'heartbeatMs' | 'maxBufferedBytes'>,
  ) {
    this.heartbeat = setInterval(() => this.res.write(': ping\n\n'), opts.heartbeatMs);
  }

  /** Writes one item as an event (res.write); false once over STREAM_MAX_BUFFERED_BYTES (ended with SLOW_CONSUMER) or ended. */
  send(item: T): boolean {
    if (this.res.writableEnded || this.res.destroyed) return false;
    const n = this.wire.numberOf(item);
    this.res.write(`id: ${n}\nevent: ${this.wire.sseEvent}\ndata: ${this.wire.text(item)}\n\n`);
    if (this.res.writableLength <= this.opts.maxBufferedBytes) return true;
    // The error event queues behind everything already written, so the client has all up to this item.
    this.end({ code: 'SLOW_CONSUMER', [this.wire.resumeField]: n });
    return false;
  }

  failed(err: unknown): void {
    if (err instanceof DomainError && err.code === 'CURSOR_EXPIRED') {
      this.end({ code: 'CURSOR_EXPIRED', oldestSequence: err.details.oldestSequence });
    } else {
      this.end({ code: 'INTERNAL' });
    }
  }

  /** A key revoked or expired while the stream runs ends it (the key was checked only at its start). */
  keyRevoked(): void {
    this.end({ code: 'KEY_REVOKED' });
  }

  stop(): void {
    clearInterval(this.heartbeat);
  }

  end(error?: Record<string, unknown>): void {
    this.stop();
    if (this.res.writableEnded) return;
    if (error) this.res.write(`event: error\ndata: ${JSON.stringify(error)}\n\n`);
    this.res.end();
  }
}
