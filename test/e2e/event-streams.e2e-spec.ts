import WebSocket from 'ws';
import { Client, clientFor, newTenant, RunningService, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { SseCollector, WsCollector } from '../support/stream-clients';
import { until } from '../support/tenant-code';
import { ThrowawayRedis } from '../support/throwaway-redis';

afterAll(() => stopBackends(), 60_000);

const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

/** Appends one event at a time (each acknowledged before the next), for as long as asked; positions as acknowledged. */
async function appendSome(
  c: Client,
  n: number,
  eventType: (i: number) => string = (i) => (i % 2 ? 'Odd' : 'Even'),
  prefix = 'acct',
): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const res = await c.post('/events', { aggregateId: `${prefix}-${i % 7}`, eventType: eventType(i), data: { i } });
    expect(res.status).toBe(201);
    out.push(res.body.position);
  }
  return out;
}

const noGapNoDuplicate = (seen: number[], expected: number[]) => expect(seen).toEqual(expected);

/**
 * GET /events/stream (WebSocket and SSE) on both stores: catch-up from afterPosition then live,
 * filters, the aggregate named `stream` left readable, and a subscription dropped and resumed
 * while appends go on, with no gap and no duplicate.
 */
describe.each(STORE_BACKENDS)('event streams on %s', (backend) => {
  let svc: RunningService;

  beforeAll(async () => {
    svc = await startService(await envFor(backend));
  }, 120_000);
  afterAll(() => svc?.close());

  it('WebSocket: the backlog after afterPosition, then live, each message the event as the log read shows it', async () => {
    const a = await newTenant(svc.url, 'ws-a');
    await appendSome(a, 5);
    const ws = await WsCollector.openEvents(svc.url, a.key, '?afterPosition=2');
    try {
      await until(
        () => ws.positions(),
        (p) => p.length >= 3,
        10_000,
        'backlog',
      );
      await appendSome(a, 5);
      await until(
        () => ws.positions(),
        (p) => p.length >= 8,
        10_000,
        'live',
      );
      noGapNoDuplicate(ws.positions(), range(3, 10));
      const log = await a.get('/events?afterPosition=2');
      expect(ws.messages).toEqual(log.body.events.map((e: any) => ({ type: 'event', ...e })));
    } finally {
      await ws.close();
    }
  });

  it('SSE: ids are positions, the event name is `event`, data the same message; without afterPosition it starts at the head', async () => {
    const a = await newTenant(svc.url, 'sse-a');
    await appendSome(a, 4);
    const sse = await SseCollector.openEvents(svc.url, a.key);
    try {
      await appendSome(a, 3);
      await until(
        () => sse.positions(),
        (p) => p.length >= 3,
        10_000,
        'live',
      );
      noGapNoDuplicate(sse.positions(), [5, 6, 7]);
      const log = await a.get('/events?afterPosition=4');
      expect(sse.events.map((e) => e.data)).toEqual(log.body.events.map((e: any) => ({ type: 'event', ...e })));
      expect(sse.events.every((e) => e.event === 'event')).toBe(true);
    } finally {
      sse.close();
    }
  });

  it('filters by aggregate type and event type on both transports, in the backlog and live', async () => {
    const a = await newTenant(svc.url, 'filter-a');
    await appendSome(a, 6, (i) => ['A', 'B', 'C'][i % 3]);
    await a.post('/events', { aggregateId: 'other-1', aggregateType: 'other', eventType: 'B', data: {} });
    const ws = await WsCollector.openEvents(svc.url, a.key, '?afterPosition=0&eventType=B&eventType=C&aggregateType=acct');
    const sse = await SseCollector.openEvents(svc.url, a.key, '?afterPosition=0&eventType=B&aggregateType=acct,other');
    try {
      await appendSome(a, 6, (i) => ['A', 'B', 'C'][i % 3], 'acct');
      await a.post('/events', { aggregateId: 'other-2', aggregateType: 'other', eventType: 'C', data: {} });
      const log = (await a.get('/events')).body.events as any[];
      const wsWant = log.filter((e) => e.aggregateType === 'acct' && e.eventType !== 'A').map((e) => e.position);
      const sseWant = log.filter((e) => e.eventType === 'B').map((e) => e.position);
      await until(
        () => [ws.positions().length, sse.positions().length],
        ([w, s]) => w >= wsWant.length && s >= sseWant.length,
        10_000,
        'filtered',
      );
      noGapNoDuplicate(ws.positions(), wsWant);
      noGapNoDuplicate(sse.positions(), sseWant);
    } finally {
      await ws.close();
      sse.close();
    }
  });

  it('resumes a dropped subscription (afterPosition on WebSocket, Last-Event-ID on SSE) while appends go on: no gap, no duplicate', async () => {
    const a = await newTenant(svc.url, 'resume-a');
    const TOTAL = 150;
    const ws: number[] = [];
    const sse: number[] = [];
    let wsClient = await WsCollector.openEvents(svc.url, a.key, '?afterPosition=0');
    let sseClient = await SseCollector.openEvents(svc.url, a.key, '?afterPosition=0');
    const appending = appendSome(a, TOTAL);
    try {
      // Each drops three times mid-flight and comes back from what it last received.
      for (let drop = 1; drop <= 3; drop++) {
        await until(
          () => [ws.length + wsClient.positions().length, sse.length + sseClient.positions().length],
          ([w, s]) => w >= drop * 30 && s >= drop * 30,
          30_000,
          `drop ${drop}`,
        );
        await wsClient.close();
        ws.push(...wsClient.positions());
        wsClient = await WsCollector.openEvents(svc.url, a.key, `?afterPosition=${ws[ws.length - 1]}`);
        sseClient.close();
        sse.push(...sseClient.positions());
        sseClient = await SseCollector.openEvents(svc.url, a.key, '', { 'last-event-id': String(sse[sse.length - 1]) });
      }
      await appending;
      await until(
        () => [ws.length + wsClient.positions().length, sse.length + sseClient.positions().length],
        ([w, s]) => w >= TOTAL && s >= TOTAL,
        30_000,
        'all',
      );
      ws.push(...wsClient.positions());
      sse.push(...sseClient.positions());
      noGapNoDuplicate(ws, range(1, TOTAL));
      noGapNoDuplicate(sse, range(1, TOTAL));
    } finally {
      await wsClient.close();
      sseClient.close();
    }
  }, 120_000);

  it('takes the key as ?apiKey= (browsers) on both transports, and refuses a bad key or a bad query before streaming', async () => {
    const a = await newTenant(svc.url, 'key-a');
    await appendSome(a, 2);
    const ws = await WsCollector.openEvents(svc.url, '', `?afterPosition=0&apiKey=${a.key}`);
    const sse = await SseCollector.openEvents(svc.url, '', `?afterPosition=0&apiKey=${a.key}`);
    try {
      await until(
        () => [ws.positions().length, sse.positions().length],
        ([w, s]) => w === 2 && s === 2,
        10_000,
        'by query key',
      );
    } finally {
      await ws.close();
      sse.close();
    }
    await expect(WsCollector.openEvents(svc.url, 'not-a-key')).rejects.toMatchObject({ status: 401 });
    await expect(SseCollector.openEvents(svc.url, 'not-a-key')).rejects.toMatchObject({ status: 401 });
    for (const q of ['?afterPosition=abc', '?eventType=', '?aggregateType=a%20b', '?afterPosition=-1']) {
      await expect(WsCollector.openEvents(svc.url, a.key, q)).rejects.toMatchObject({ status: 400 });
      await expect(SseCollector.openEvents(svc.url, a.key, q)).rejects.toMatchObject({
        status: 400,
        body: { error: 'VALIDATION_FAILED' },
      });
    }
    await expect(SseCollector.openEvents(svc.url, a.key, '', { 'last-event-id': 'x' })).rejects.toMatchObject({ status: 400 });
  });

  it('never streams another tenant’s events', async () => {
    const a = await newTenant(svc.url, 'iso-a');
    const b = await newTenant(svc.url, 'iso-b');
    const ws = await WsCollector.openEvents(svc.url, a.key, '?afterPosition=0');
    try {
      await appendSome(b, 3, () => 'B', 'theirs');
      await appendSome(a, 2, () => 'A', 'mine');
      await until(
        () => ws.positions(),
        (p) => p.length >= 2,
        10_000,
        'mine',
      );
      expect(ws.messages.map((m) => m.aggregateId)).toEqual(['mine-0', 'mine-1']);
    } finally {
      await ws.close();
    }
  });
});

describe('event streams: keepalive and the slow-consumer cut, as on projection streams', () => {
  let svc: RunningService;
  beforeAll(async () => {
    // A 1 KiB buffer bound: every 2 KB event puts the socket over it, so each connection is cut after one event.
    svc = await startService({ STREAM_PING_MS: '300', SSE_HEARTBEAT_MS: '300', STREAM_MAX_BUFFERED_BYTES: '1024' });
  }, 120_000);
  afterAll(() => svc?.close());

  it('cuts a consumer past the buffer bound with the position to resume after; resuming from it gets every event once', async () => {
    const a = await newTenant(svc.url, 'slow-a');
    const pad = 'x'.repeat(2048);
    for (let i = 0; i < 12; i++)
      expect((await a.post('/events', { aggregateId: `big-${i % 3}`, eventType: 'Big', data: { pad } })).status).toBe(201);
    const ws: number[] = [];
    let wsCuts = 0;
    while (ws.length < 12) {
      const c = await WsCollector.openEvents(svc.url, a.key, `?afterPosition=${ws[ws.length - 1] ?? 0}`);
      await until(
        () => c.closeCode,
        (code) => code !== null,
        10_000,
        'the cut',
      );
      expect(c.closeCode).toBe(4008);
      const reason = JSON.parse(c.closeReason);
      expect(reason).toEqual({ code: 'SLOW_CONSUMER', resumeAfterPosition: c.positions()[c.positions().length - 1] });
      ws.push(...c.positions());
      wsCuts++;
    }
    expect(ws).toEqual(range(1, 12));
    expect(wsCuts).toBeGreaterThan(1);

    const sse: number[] = [];
    while (sse.length < 12) {
      const c = await SseCollector.openEvents(svc.url, a.key, `?afterPosition=${sse[sse.length - 1] ?? 0}`);
      await until(
        () => c.events.find((e) => e.event === 'error'),
        (e) => e !== undefined,
        10_000,
        'the error event',
      );
      expect(c.events.find((e) => e.event === 'error')!.data).toEqual({
        code: 'SLOW_CONSUMER',
        resumeAfterPosition: c.positions()[c.positions().length - 1],
      });
      sse.push(...c.positions());
      c.close();
    }
    expect(sse).toEqual(range(1, 12));
  });

  it('pings WebSocket clients and closes one that does not answer (4000); sends SSE heartbeats', async () => {
    const a = await newTenant(svc.url, 'ping-a');
    const raw = new WebSocket(`${svc.url.replace(/^http/, 'ws')}/events/stream`, { headers: { 'x-api-key': a.key } });
    const pings: string[] = [];
    raw.on('message', (d) => pings.push(String(d)));
    const closed = new Promise<number>((r) => raw.once('close', (code) => r(code)));
    expect(await closed).toBe(4000);
    expect(pings).toContain(JSON.stringify({ type: 'ping' }));
    const answering = await WsCollector.openEvents(svc.url, a.key);
    const sse = await SseCollector.openEvents(svc.url, a.key);
    try {
      await until(
        () => sse.comments,
        (n) => n >= 2,
        10_000,
        'heartbeats',
      );
      expect(answering.closeCode).toBeNull(); // it answered every ping meanwhile
    } finally {
      await answering.close();
      sse.close();
    }
  });
});

describe('event streams across two instances on PostgreSQL', () => {
  let redis: ThrowawayRedis;
  beforeAll(async () => {
    redis = await ThrowawayRedis.start();
  }, 60_000);
  afterAll(() => redis?.stop(), 30_000);

  it.each([
    // The store poll is off (an hour): only the Redis wake can bring B the appends made on A.
    ['Redis wake-ups', true, '3600000'],
    // No Redis: the poll of the tenant's head (STREAM_POLL_MS) is what wakes B.
    ['the head poll without Redis', false, '200'],
  ])(
    'an append on instance A reaches subscribers on instance B (%s)',
    async (_what, withRedis, pollMs) => {
      const env = { ...(await envFor('postgres')), STREAM_POLL_MS: pollMs, ...(withRedis ? { REDIS_URL: redis.url } : {}) };
      const svcA = await startService(env);
      const svcB = await startService(env);
      try {
        const onA = await newTenant(svcA.url, 'roaming');
        const onB = clientFor(svcB.url, onA.key);
        await appendSome(onB, 3);
        const ws = await WsCollector.openEvents(svcB.url, onA.key, '?afterPosition=1');
        const sse = await SseCollector.openEvents(svcB.url, onA.key, '?afterPosition=1');
        try {
          await appendSome(onA, 20);
          await until(
            () => [ws.positions().length, sse.positions().length],
            ([w, s]) => w >= 22 && s >= 22,
            15_000,
            'appends of A on B',
          );
          noGapNoDuplicate(ws.positions(), range(2, 23));
          noGapNoDuplicate(sse.positions(), range(2, 23));
        } finally {
          await ws.close();
          sse.close();
        }
      } finally {
        await svcB.close();
        await svcA.close();
      }
    },
    180_000,
  );
});
