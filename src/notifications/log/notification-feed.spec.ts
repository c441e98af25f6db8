import { NotificationFeed } from './notification-feed';

/** The poll that wakes streams for notifications logged by another instance (no Redis wake came). */
describe('NotificationFeed head poll', () => {
  const webhooks = { notified: jest.fn() };
  let feed: NotificationFeed;
  let heads: Map<string, number>;
  const head = jest.fn(async (t: string, p: string) => heads.get(`${t}/${p}`) ?? 0);

  beforeEach(() => {
    jest.useFakeTimers();
    heads = new Map([['t1/p1', 5]]);
    head.mockClear();
    feed = new NotificationFeed(webhooks);
    feed.startPolling(head, 1_000);
  });
  afterEach(async () => {
    await feed.close();
    jest.useRealTimers();
  });

  const tick = async () => {
    await jest.advanceTimersByTimeAsync(1_000);
  };

  it('wakes the streams of a projection when its head moved in the store, and not when it did not', async () => {
    const wake = jest.fn();
    feed.subscribe('t1', 'p1', wake);
    await tick();
    expect(wake).toHaveBeenCalledTimes(1); // the first look
    await tick();
    expect(wake).toHaveBeenCalledTimes(1); // nothing new
    heads.set('t1/p1', 7); // logged by a lane of another instance: no local wake
    await tick();
    expect(wake).toHaveBeenCalledTimes(2);
    expect(webhooks.notified).not.toHaveBeenCalled();
  });

  it('reads only the projections streamed here, and stops reading one whose streams all ended', async () => {
    const off = feed.subscribe('t1', 'p1', () => undefined);
    await tick();
    expect(head.mock.calls).toEqual([['t1', 'p1']]);
    off();
    head.mockClear();
    await tick();
    expect(head).not.toHaveBeenCalled();
  });

  it('goes on after a failed read', async () => {
    const wake = jest.fn();
    feed.subscribe('t1', 'p1', wake);
    head.mockRejectedValueOnce(new Error('store down'));
    await tick();
    expect(wake).not.toHaveBeenCalled();
    await tick();
    expect(wake).toHaveBeenCalledTimes(1);
  });
});
