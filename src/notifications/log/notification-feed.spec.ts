import { AppConfig } from '../../config/app-config';
import { NotificationFeed } from './notification-feed';
import { NotificationReader } from './notification-reader';
import { StreamWakeups } from './stream-wakeups.port';

/** The streams open here, as the feed sees them: which projections are streamed, and the wakes it sends. */
class StreamsHere implements StreamWakeups {
  readonly streamed = new Set<string>();
  readonly woken: string[] = [];
  wakeProjection(tenantId: string, projectionId: string): void {
    this.woken.push(`${tenantId}/${projectionId}`);
  }
  wakeEventStreams(): void {}
  streamedProjections(): [string, string][] {
    return [...this.streamed].map((id) => id.split('/') as [string, string]);
  }
  streamedTenants(): string[] {
    return [];
  }
}

const config = { redisUrl: undefined, notifications: { pollMs: 1_000 } } as Pick<AppConfig, 'redisUrl' | 'notifications'>;

/** The poll that wakes streams for notifications logged by another instance (no Redis wake came). */
describe('NotificationFeed head poll', () => {
  const webhooks = { notified: jest.fn() };
  let feed: NotificationFeed;
  let streams: StreamsHere;
  let heads: Map<string, number>;
  const head = jest.fn(async (t: string, p: string) => heads.get(`${t}/${p}`) ?? 0);

  beforeEach(() => {
    jest.useFakeTimers();
    heads = new Map([['t1/p1', 5]]);
    head.mockClear();
    webhooks.notified.mockClear();
    streams = new StreamsHere();
    feed = new NotificationFeed(streams, webhooks, { headSequence: head } as unknown as NotificationReader, config);
    feed.onApplicationBootstrap();
  });
  afterEach(async () => {
    await feed.close();
    jest.useRealTimers();
  });

  const tick = async () => {
    await jest.advanceTimersByTimeAsync(1_000);
  };

  it('wakes the streams of a projection when its head moved in the store, and not when it did not', async () => {
    streams.streamed.add('t1/p1');
    await tick();
    expect(streams.woken).toEqual(['t1/p1']); // the first look
    await tick();
    expect(streams.woken).toHaveLength(1); // nothing new
    heads.set('t1/p1', 7); // logged by a lane of another instance: no local wake
    await tick();
    expect(streams.woken).toHaveLength(2);
    expect(webhooks.notified).not.toHaveBeenCalled();
  });

  it('reads only the projections streamed here, and stops reading one whose streams all ended', async () => {
    streams.streamed.add('t1/p1');
    await tick();
    expect(head.mock.calls).toEqual([['t1', 'p1']]);
    streams.streamed.delete('t1/p1');
    head.mockClear();
    await tick();
    expect(head).not.toHaveBeenCalled();
  });

  it('goes on after a failed read', async () => {
    streams.streamed.add('t1/p1');
    head.mockRejectedValueOnce(new Error('store down'));
    await tick();
    expect(streams.woken).toEqual([]);
    await tick();
    expect(streams.woken).toEqual(['t1/p1']);
  });
});

describe('NotificationFeed wakes', () => {
  afterEach(() => jest.useRealTimers());

  it("coalesces a projection's lane commits into one wake of its streams and its webhook", async () => {
    jest.useFakeTimers();
    const streams = new StreamsHere();
    const webhooks = { notified: jest.fn() };
    const feed = new NotificationFeed(streams, webhooks, {} as NotificationReader, config);
    const lane = { tenantId: 't1', versionId: 'v1', key: 'k' };
    feed.laneApplied(lane, 1, 'p1');
    feed.laneApplied(lane, 2, 'p1');
    feed.laneApplied(lane, 3, null);
    expect(streams.woken).toEqual([]);
    await jest.advanceTimersByTimeAsync(2);
    expect(streams.woken).toEqual(['t1/p1']);
    expect(webhooks.notified.mock.calls).toEqual([['t1', 'p1']]);
    await feed.close();
  });
});
