import { StreamTransport } from './stream-transport.port';

export interface StreamCursorOptions {
  /** Notifications read from the source at a time: the most a connection holds beyond its transport buffer. */
  pageSize: number;
}

/** What a cursor follows: items numbered in ascending order (notification sequences, log positions). */
export interface CursorFeed<T> {
  /** Up to `limit` items numbered above `after`, ascending. */
  read(after: number, limit: number): Promise<T[]>;
  numberOf(item: T): number;
}

/**
 * The per-connection pump of the stream transports: replays the backlog after a cursor and
 * then follows live items, page by page from the feed instead of a per-connection queue, so a
 * slow client costs at most one page plus its transport's buffer bound. The projection streams
 * (notifications by sequence) and the event streams (the log by position) both run on it.
 *
 * The cursor is the only record of what was sent: a page is always read after it and only
 * numbers above it are sent, so the seam between backlog and live has neither gap nor
 * duplicate however wakes and reads interleave (StreamHub registers it before its first read, so
 * anything stored after that read still wakes it). Woken by StreamHub (`wake`); writes to its
 * transport (`send`), and tells it of a read failure (`failed`, the cursor stopped).
 */
export class StreamCursor<T> {
  private cursor: number;
  private pumping = false;
  /** Set by every wake and cleared when a pump starts a pass, so a wake during a pass earns another pass. */
  private wakePending = false;
  /** The transport is over its buffer bound: pumping waits for resume(). */
  private paused = false;
  private stopped = false;
  private started = false;

  constructor(
    private readonly feed: CursorFeed<T>,
    after: number,
    private readonly transport: StreamTransport<T>,
    private readonly opts: StreamCursorOptions,
  ) {
    this.cursor = after;
  }

  /** The number of the last item handed to the transport (the starting cursor before any). */
  get lastNumber(): number {
    return this.cursor;
  }

  /** The catch-up: the first read, after the hub has registered the cursor for wakes. */
  start(): void {
    if (this.stopped || this.started) return;
    this.started = true;
    this.wake();
  }

  resume(): void {
    this.paused = false;
    this.wake();
  }

  stop(): void {
    this.stopped = true;
  }

  /** New items may exist (StreamHub, for the projection or log this cursor follows). */
  wake(): void {
    if (this.stopped || !this.started) return;
    this.wakePending = true;
    if (!this.pumping && !this.paused) void this.pump();
  }

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
        this.transport.failed(err);
      }
    } finally {
      this.pumping = false;
    }
  }

  private async sendUntilEmpty(): Promise<void> {
    for (;;) {
      const page = await this.feed.read(this.cursor, this.opts.pageSize);
      let advanced = false;
      for (const item of page) {
        if (this.stopped) return;
        const n = this.feed.numberOf(item);
        if (n <= this.cursor) continue;
        this.cursor = n;
        advanced = true;
        if (!this.transport.send(item)) {
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
