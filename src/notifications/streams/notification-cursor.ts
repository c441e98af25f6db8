import { validationFailed } from '../../common/domain-error';
import { parseIntParam } from '../../common/int-param';
import { Notification } from '../log/notification';
import { StreamSource } from './stream-source';

export interface NotificationCursorOptions {
  /** Notifications read from the source at a time: the most a connection holds beyond its transport buffer. */
  pageSize: number;
}

/**
 * The per-connection pump of the stream transports: replays the backlog after a cursor and
 * then follows live notifications, page by page from the source instead of a per-connection
 * queue, so a slow client costs at most one page plus its transport's buffer bound.
 *
 * The cursor is the only record of what was sent: a page is always read after it and only
 * sequences above it are sent, so the seam between backlog and live has neither gap nor
 * duplicate however wakes and reads interleave.
 */
export class NotificationCursor {
  /** Read failures (e.g. DomainError CURSOR_EXPIRED); the cursor has stopped when this is called. */
  onError: (err: unknown) => void = () => undefined;

  private cursor: number;
  private pumping = false;
  /** Set by every wake and cleared when a pump starts a pass, so a wake during a pass earns another pass. */
  private wakePending = false;
  /** The transport is over its buffer bound: pumping waits for resume(). */
  private paused = false;
  private stopped = false;
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly source: StreamSource,
    private readonly tenantId: string,
    private readonly projectionId: string,
    afterSequence: number,
    /** Returns false when the transport is over its buffer bound. */
    private readonly send: (n: Notification) => boolean,
    private readonly opts: NotificationCursorOptions,
  ) {
    this.cursor = afterSequence;
  }

  /** The sequence of the last notification handed to the transport (the starting cursor before any). */
  get lastSequence(): number {
    return this.cursor;
  }

  start(): void {
    if (this.stopped || this.unsubscribe) return;
    // Subscribed before the first read: anything stored after that read still wakes us.
    this.unsubscribe = this.source.subscribe(this.tenantId, this.projectionId, this.wake);
    this.wake();
  }

  resume(): void {
    this.paused = false;
    this.wake();
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  private readonly wake = (): void => {
    if (this.stopped) return;
    this.wakePending = true;
    if (!this.pumping && !this.paused) void this.pump();
  };

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (this.wakePending && !this.paused && !this.stopped) {
        this.wakePending = false;
        await this.sendUntilEmpty();
      }
    } catch (err) {
      if (!this.stopped) {
        this.stop();
        this.onError(err);
      }
    } finally {
      this.pumping = false;
    }
  }

  private async sendUntilEmpty(): Promise<void> {
    for (;;) {
      const page = await this.source.read(this.tenantId, this.projectionId, this.cursor, this.opts.pageSize);
      let advanced = false;
      for (const n of page) {
        if (this.stopped) return;
        if (n.sequence <= this.cursor) continue;
        this.cursor = n.sequence;
        advanced = true;
        if (!this.send(n)) {
          this.paused = true;
          // What is left after the cursor still has to be read once the transport drains.
          this.wakePending = true;
          return;
        }
      }
      // A page with nothing new (empty, or a source repeating itself) ends the pass rather than spinning.
      if (!advanced || this.stopped) return;
    }
  }
}

/** A client-supplied cursor (query parameter or Last-Event-ID): a non-negative integer, else VALIDATION_FAILED. */
export function parseSequence(field: string, text: string): number {
  // Given but empty is an error here, not "absent".
  if (text === '') throw validationFailed(field, 'must be a non-negative integer');
  return parseIntParam(field, text, 0);
}
