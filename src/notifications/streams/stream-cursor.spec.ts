import { FakeSource, PROJECTION, range, TENANT, until } from '../../../test/support/stream-transport-fakes';
import { elapse } from '../../../test/support/wait';
import { Notification } from '../log/notification';
import { NotificationCursorFeed } from './notification-cursor';
import { StreamCursor } from './stream-cursor';
import { StreamTransport } from './stream-transport.port';

/** A transport that records what its cursor hands it; `accepts` says whether it is under its buffer bound. */
class RecordingTransport implements StreamTransport<Notification> {
  readonly sent: number[] = [];
  readonly failures: unknown[] = [];
  constructor(private readonly accepts: (n: Notification) => boolean = () => true) {}
  send(n: Notification): boolean {
    this.sent.push(n.sequence);
    return this.accepts(n);
  }
  failed(err: unknown): void {
    this.failures.push(err);
  }
  keyRevoked(): void {}
}

/** A cursor alone, woken by hand (the hub's part): its source appends wake nobody. */
function cursorOver(source: FakeSource, transport: RecordingTransport, pageSize: number) {
  return new StreamCursor(new NotificationCursorFeed(source, TENANT, PROJECTION), 0, transport, { pageSize });
}

describe('StreamCursor', () => {
  it('stops pumping when the transport is over its bound and goes on from the cursor on resume()', async () => {
    const source = new FakeSource();
    source.append(10);
    let accepting = false;
    const transport = new RecordingTransport((n) => accepting || n.sequence < 3);
    const cursor = cursorOver(source, transport, 4);
    cursor.start();
    await until(() => transport.sent.length === 3, 'three sends');
    source.append(2);
    cursor.wake();
    await elapse(20, 'time for a send past the window, which must not go out');
    expect(transport.sent).toEqual([1, 2, 3]);
    expect(cursor.lastNumber).toBe(3);
    accepting = true;
    cursor.resume();
    await until(() => transport.sent.length === 12, 'the rest');
    expect(transport.sent).toEqual(range(1, 12));
    cursor.stop();
  });

  it('sends nothing once stopped, even from a read already in flight, and reads nothing more when woken', async () => {
    const source = new FakeSource();
    source.append(5);
    source.readDelayMs = 30;
    const transport = new RecordingTransport();
    const cursor = cursorOver(source, transport, 10);
    cursor.start();
    await until(() => source.readsInFlight === 1, 'the first read');
    cursor.stop();
    await until(() => source.readsInFlight === 0, 'the read to end');
    cursor.wake();
    expect(source.readsInFlight).toBe(0);
    expect(transport.sent).toEqual([]);
  });

  it('reads nothing before start(): a wake of a cursor not yet started is not a catch-up', async () => {
    const source = new FakeSource();
    source.append(3);
    const transport = new RecordingTransport();
    const cursor = cursorOver(source, transport, 10);
    cursor.wake();
    expect(source.readsInFlight).toBe(0);
    cursor.start();
    await until(() => transport.sent.length === 3, 'the catch-up');
    expect(transport.sent).toEqual([1, 2, 3]);
  });

  it("hands a read failure to its transport's failed() once, and stops", async () => {
    const source = new FakeSource();
    source.append(5);
    source.oldestKept = 3;
    const transport = new RecordingTransport();
    const cursor = cursorOver(source, transport, 10);
    cursor.start();
    await until(() => transport.failures.length === 1, 'the failure');
    expect(transport.failures[0]).toMatchObject({ code: 'CURSOR_EXPIRED', details: { oldestSequence: 3 } });
    source.oldestKept = 1;
    cursor.wake();
    expect(source.readsInFlight).toBe(0);
    expect(transport.sent).toEqual([]);
  });
});
