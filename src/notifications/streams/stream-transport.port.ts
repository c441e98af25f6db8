/**
 * The wire of one admitted stream, as its cursor writes to it: WebSocketStreamConnection (a frame
 * per item) and SseConnection (an event per item) implement it. StreamCursor calls send and failed;
 * StreamHub calls keyRevoked (its key watch).
 */
export abstract class StreamTransport<T> {
  /** Writes one item; false when over its buffer bound or closing (the cursor then stops pumping). */
  abstract send(item: T): boolean;
  /** The cursor stopped on a read failure (e.g. the notifications' DomainError CURSOR_EXPIRED): end the stream saying why. */
  abstract failed(err: unknown): void;
  /** The stream's API key was revoked or expired while it ran. */
  abstract keyRevoked(): void;
}
