import { DomainError } from '../../common/domain-error';
import { NO_SSE_PROJECTION, range, TransportsHarness, until } from '../../../test/support/stream-transport-fakes';
import { elapse } from '../../../test/support/wait';

let h: TransportsHarness;
afterEach(() => h.stop());

describe('SSE', () => {
  it('replays after afterSequence and goes live as state_changed events with the sequence as id', async () => {
    h = await TransportsHarness.start();
    h.source.append(12);
    h.source.readDelayMs = 10;
    let racingAppends = 3;
    h.source.onRead = (page) => {
      if (page.length === 0 && racingAppends-- > 0) h.source.append(1);
    };
    const stream = await h.openSse('?afterSequence=2');
    expect(stream.res.statusCode).toBe(200);
    expect(stream.res.headers).toMatchObject({
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    });
    for (let i = 0; i < 10; i++) {
      h.source.append(1);
      await elapse(3, 'writes land while the stream replays');
    }
    await until(() => stream.sequences().length >= 23, '23 events');
    await elapse(30, 'time for a repeat or a gap to show, which none may');
    expect(stream.sequences()).toEqual(range(3, 25));
    expect(stream.events[0]).toEqual({
      id: '3',
      event: 'state_changed',
      data: expect.any(String),
    });
    expect(JSON.parse(stream.events[0].data!)).toMatchObject({ type: 'state_changed', sequence: 3, state: { total: 1 } });
  });

  it('lets Last-Event-ID win over afterSequence, and starts at the head without either', async () => {
    h = await TransportsHarness.start();
    h.source.append(10);
    const reconnected = await h.openSse('?afterSequence=2', { 'last-event-id': '7' });
    const live = await h.openSse();
    await until(() => reconnected.sequences().length >= 3, 'the replay');
    h.source.append(1);
    await until(() => live.sequences().length >= 1, 'the live event');
    await until(() => reconnected.sequences().length >= 4, 'the live event');
    expect(reconnected.sequences()).toEqual([8, 9, 10, 11]);
    expect(live.sequences()).toEqual([11]);
  });

  it('sends a heartbeat comment', async () => {
    h = await TransportsHarness.start({ options: { heartbeatMs: 50 } });
    const stream = await h.openSse();
    await until(() => stream.comments.length >= 2, 'two heartbeats');
    expect(stream.comments.slice(0, 2)).toEqual(['ping', 'ping']);
  });

  it('throws before writing anything when the projection is unknown, SSE is disabled or the cursor is invalid', async () => {
    h = await TransportsHarness.start();
    const disabled = await h.openSse('', {}, NO_SSE_PROJECTION);
    await disabled.ended;
    expect(disabled.res.statusCode).toBe(409);
    const unknown = await h.openSse('', {}, 'unknown');
    await unknown.ended;
    expect(unknown.res.statusCode).toBe(404);
    const invalid = await h.openSse('', { 'last-event-id': 'x' });
    await invalid.ended;
    expect(invalid.res.statusCode).toBe(400);
    expect(h.handleFailures.map((f) => [(f.err as DomainError).code, f.headersSent])).toEqual([
      ['SSE_DISABLED', false],
      ['NOT_FOUND', false],
      ['VALIDATION_FAILED', false],
    ]);
    expect(h.sse.connectionCount()).toBe(0);
  });

  it('ends with an error event naming the oldest kept sequence when the cursor has expired', async () => {
    h = await TransportsHarness.start();
    h.source.append(20);
    h.source.oldestKept = 11;
    const stream = await h.openSse('?afterSequence=3');
    await stream.ended;
    expect(stream.events).toEqual([{ event: 'error', data: JSON.stringify({ code: 'CURSOR_EXPIRED', oldestSequence: 11 }) }]);
    expect(h.openCursors()).toBe(0);
  });

  it('ends a client that stops reading with SLOW_CONSUMER and the sequence to resume after', async () => {
    h = await TransportsHarness.start({ options: { maxBufferedBytes: 512 * 1024, pageSize: 10 } });
    const total = 2000;
    h.source.append(total, JSON.stringify({ blob: 'x'.repeat(16 * 1024) }));
    const stream = await h.openSse('?afterSequence=0');
    stream.res.socket.pause();
    await elapse(500, 'the stalled socket stays paused while its buffer fills');
    stream.res.socket.resume();
    await stream.ended;
    const last = stream.events[stream.events.length - 1];
    expect(last.event).toBe('error');
    const { code, resumeAfterSequence } = JSON.parse(last.data!) as { code: string; resumeAfterSequence: number };
    expect(code).toBe('SLOW_CONSUMER');
    expect(resumeAfterSequence).toBeLessThan(total);
    expect(stream.sequences()).toEqual(range(1, resumeAfterSequence));
  });

  it('stops on client disconnect and ends every stream on close()', async () => {
    h = await TransportsHarness.start();
    const leaving = await h.openSse();
    const staying = await h.openSse();
    await until(() => h.sse.connectionCount() === 2, 'both streams');
    leaving.res.destroy();
    await until(() => h.sse.connectionCount() === 1 && h.openCursors() === 1, 'the server to let go');
    h.sse.close();
    await staying.ended;
    expect(h.sse.connectionCount()).toBe(0);
    expect(h.openCursors()).toBe(0);
  });
});
