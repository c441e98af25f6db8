import { Client, newTenant, request, RunningService, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';

afterAll(() => stopBackends(), 60_000);

/**
 * GET /events (the tenant's log in position order) and direction=backward on GET /events/{id},
 * on both stores, over real HTTP. The log written here: 60 events over three aggregate types and
 * three event types, in batches, interleaved, so a filter's matches are spread over the log.
 */
describe.each(STORE_BACKENDS)('the tenant log over HTTP on %s', (backend) => {
  let svc: RunningService;
  let a: Client;
  let b: Client;
  /** What was appended, in position order: [position, aggregateId, aggregateType, eventType, version]. */
  const written: { position: number; aggregateId: string; aggregateType: string; eventType: string; version: number }[] = [];

  const TYPES = ['order', 'cart', 'user'];
  const EVENT_TYPES = ['Created', 'Changed', 'Closed'];

  beforeAll(async () => {
    svc = await startService(await envFor(backend));
    a = await newTenant(svc.url, 'log-a');
    b = await newTenant(svc.url, 'log-b');
    // Tenant b's events interleave with a's: a's positions must stay 1..60 and b's never show.
    for (let i = 0; i < 20; i++) {
      const aggregateType = TYPES[i % 3];
      const aggregateId = `${aggregateType}-${i % 5}`;
      const events = [0, 1, 2].map((k) => ({ eventType: EVENT_TYPES[(i + k) % 3], data: { i, k } }));
      const res = await a.post('/events/batch', { aggregateId, aggregateType, events });
      expect(res.status).toBe(201);
      events.forEach((e, k) =>
        written.push({
          position: res.body.startPosition + k,
          aggregateId,
          aggregateType,
          eventType: e.eventType,
          version: res.body.startVersion + k,
        }),
      );
      await b.post('/events', { aggregateId: `other-${i}`, eventType: 'Created', data: {} });
    }
    // A single append of an aggregate named `stream`: GET /events/stream must still read it.
    const s1 = await a.post('/events', { aggregateId: 'stream', aggregateType: 'order', eventType: 'Created', data: { s: 1 } });
    const s2 = await a.post('/events', { aggregateId: 'stream', eventType: 'Changed', data: { s: 2 } });
    written.push({ position: s1.body.position, aggregateId: 'stream', aggregateType: 'order', eventType: 'Created', version: 1 });
    written.push({ position: s2.body.position, aggregateId: 'stream', aggregateType: 'order', eventType: 'Changed', version: 2 });
  }, 180_000);
  afterAll(() => svc?.close());

  const positions = (body: any) => body.events.map((e: any) => e.position);
  const matching = (pred: (w: (typeof written)[number]) => boolean) => written.filter(pred).map((w) => w.position);

  /** Pages through with the cursors the answers give, as a client does; also checks each page's size. */
  async function pageAll(query: string, limit: number, backward = false): Promise<number[]> {
    const seen: number[] = [];
    let cursor: number | undefined = backward ? undefined : 0;
    for (let pages = 0; pages < 1000; pages++) {
      const c = cursor === undefined ? '' : backward ? `&beforePosition=${cursor}` : `&afterPosition=${cursor}`;
      const res = await a.get(`/events?limit=${limit}${backward ? '&direction=backward' : ''}${c}${query}`);
      expect(res.status).toBe(200);
      expect(res.body.events.length).toBeLessThanOrEqual(limit);
      seen.push(...positions(res.body));
      if (backward) {
        if (res.body.nextBeforePosition === undefined) return seen;
        expect(res.body.nextBeforePosition).toBe(seen[seen.length - 1]);
        cursor = res.body.nextBeforePosition;
      } else {
        expect(res.body.nextAfterPosition).toBe(seen.length ? seen[seen.length - 1] : 0);
        if (res.body.events.length === 0) return seen;
        cursor = res.body.nextAfterPosition;
      }
    }
    throw new Error('paging did not end');
  }

  it('reads the whole log in position order, each event as GET /events/{id} shows it plus aggregateType and position', async () => {
    const res = await a.get('/events');
    expect(res.status).toBe(200);
    expect(positions(res.body)).toEqual(Array.from({ length: written.length }, (_, i) => i + 1));
    expect(res.body.nextAfterPosition).toBe(written.length);
    const byAggregate = await a.get('/events/order-0');
    const fromLog = res.body.events.filter((e: any) => e.aggregateId === 'order-0');
    expect(fromLog).toEqual(byAggregate.body.events);
    expect(fromLog[0]).toEqual({
      eventId: expect.any(String),
      aggregateId: 'order-0',
      aggregateType: 'order',
      eventType: expect.any(String),
      data: { i: 0, k: 0 },
      version: 1,
      timestamp: expect.stringMatching(/Z$/),
      position: 1,
      correlationId: null,
      causationId: null,
      metadata: null,
    });
  });

  it('pages forwards and backwards with the cursors it answers, with no gap or duplicate', async () => {
    const all = written.map((w) => w.position);
    expect(await pageAll('', 7)).toEqual(all);
    expect(await pageAll('', 7, true)).toEqual([...all].reverse());
    expect(await pageAll('', 1000, true)).toEqual([...all].reverse());
  });

  it('answers an empty page after the head with the cursor it was given, and the next append after it', async () => {
    const head = written.length;
    const empty = await a.get(`/events?afterPosition=${head}`);
    expect(empty.body).toEqual({ events: [], nextAfterPosition: head });
    const far = await a.get(`/events?afterPosition=${head + 1000}`);
    expect(far.body).toEqual({ events: [], nextAfterPosition: head + 1000 });
    const before1 = await a.get('/events?direction=backward&beforePosition=1');
    expect(before1.body).toEqual({ events: [] });
  });

  it.each([
    ['aggregateType=cart', (w: (typeof written)[number]) => w.aggregateType === 'cart'],
    ['eventType=Closed', (w: (typeof written)[number]) => w.eventType === 'Closed'],
    ['aggregateType=cart,user', (w: (typeof written)[number]) => w.aggregateType !== 'order'],
    ['eventType=Created,Closed', (w: (typeof written)[number]) => w.eventType !== 'Changed'],
    ['aggregateType=order&eventType=Changed', (w: (typeof written)[number]) => w.aggregateType === 'order' && w.eventType === 'Changed'],
    [
      'aggregateType=order,user&eventType=Created,Changed',
      (w: (typeof written)[number]) => w.aggregateType !== 'cart' && w.eventType !== 'Closed',
    ],
    ['aggregateType=nothing', () => false],
    ['eventType=Created&eventType=Closed', (w: (typeof written)[number]) => w.eventType !== 'Changed'],
  ])('filters with %s, forwards and backwards, page by page', async (query, pred) => {
    const expected = matching(pred);
    if (query !== 'aggregateType=nothing') expect(expected.length).toBeGreaterThan(3);
    expect(await pageAll(`&${query}`, 3)).toEqual(expected);
    expect(await pageAll(`&${query}`, 3, true)).toEqual([...expected].reverse());
    const whole = await a.get(`/events?${query}`);
    expect(positions(whole.body)).toEqual(expected);
    expect(whole.body.events.every((e: any) => pred(e))).toBe(true);
  });

  it('never shows another tenant’s events', async () => {
    const res = await b.get('/events');
    expect(res.body.events.map((e: any) => e.aggregateId)).toEqual(Array.from({ length: 20 }, (_, i) => `other-${i}`));
    expect(positions(res.body)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=10001', 'limit'],
    ['limit=abc', 'limit'],
    ['afterPosition=-1', 'afterPosition'],
    ['afterPosition=1e3', 'afterPosition'],
    ['afterPosition=99999999999999999999', 'afterPosition'],
    ['direction=sideways', 'direction'],
    ['direction=backward&direction=forward', 'direction'],
    ['direction=backward&afterPosition=3', 'afterPosition'],
    ['beforePosition=3', 'beforePosition'],
    ['direction=backward&beforePosition=0', 'beforePosition'],
    ['aggregateType=', 'aggregateType'],
    ['aggregateType=a,,b', 'aggregateType'],
    ['aggregateType=bad%20type', 'aggregateType'],
    ['eventType=' + Array.from({ length: 21 }, (_, i) => `E${i}`).join(','), 'eventType'],
    ['eventType=' + 'x'.repeat(201), 'eventType'],
  ])('refuses a bad query (%#) with 400 VALIDATION_FAILED naming the field', async (query, field) => {
    const res = await a.get(`/events?${query}`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'VALIDATION_FAILED', field });
  });

  it('takes up to 10,000 a page and 20 values a filter', async () => {
    expect((await a.get('/events?limit=10000')).status).toBe(200);
    const twenty = Array.from({ length: 19 }, (_, i) => `E${i}`)
      .concat('Closed')
      .join(',');
    const res = await a.get(`/events?eventType=${twenty}`);
    expect(res.status).toBe(200);
    expect(positions(res.body)).toEqual(matching((w) => w.eventType === 'Closed'));
  });

  it('reads an aggregate backwards, page by page, with nextBeforeVersion', async () => {
    const versions = written.filter((w) => w.aggregateId === 'cart-1').map((w) => w.version);
    expect(versions.length).toBeGreaterThan(4);
    const seen: number[] = [];
    let q = '/events/cart-1?direction=backward&limit=4';
    for (;;) {
      const res = await a.get(q);
      expect(res.status).toBe(200);
      seen.push(...res.body.events.map((e: any) => e.version));
      if (res.body.nextBeforeVersion === undefined) break;
      expect(res.body.nextBeforeVersion).toBe(seen[seen.length - 1]);
      q = `/events/cart-1?direction=backward&limit=4&beforeVersion=${res.body.nextBeforeVersion}`;
    }
    expect(seen).toEqual([...versions].reverse());
    expect((await a.get('/events/cart-1?direction=backward&beforeVersion=1')).body).toEqual({ events: [] });
    expect((await a.get('/events/nobody?direction=backward')).body).toEqual({ events: [] });
    const refused = await a.get('/events/cart-1?direction=backward&fromVersion=2');
    expect(refused).toMatchObject({ status: 400, body: { error: 'VALIDATION_FAILED', field: 'fromVersion' } });
    expect((await a.get('/events/cart-1?beforeVersion=2')).body).toMatchObject({ error: 'VALIDATION_FAILED', field: 'beforeVersion' });
    // Forward reads are as they were.
    expect((await a.get('/events/cart-1?limit=2')).body.nextFromVersion).toBe(3);
  });

  it('reads the aggregate named `stream` with a plain GET of /events/stream, forwards and backwards', async () => {
    const res = await a.get('/events/stream');
    expect(res.status).toBe(200);
    expect(res.body.events.map((e: any) => [e.aggregateId, e.version, e.data])).toEqual([
      ['stream', 1, { s: 1 }],
      ['stream', 2, { s: 2 }],
    ]);
    const back = await a.get('/events/stream?direction=backward&limit=1');
    expect(back.body.events.map((e: any) => e.version)).toEqual([2]);
    expect(back.body.nextBeforeVersion).toBe(2);
    expect((await a.get('/events/stream?limit=0')).status).toBe(400);
  });

  it('needs an API key', async () => {
    expect((await request(`${svc.url}/events`, 'GET')).status).toBe(401);
  });
});
