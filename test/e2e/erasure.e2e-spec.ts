import { Cluster } from '../support/multi-instance';
import { Client, clientFor, newTenant, request, RunningService, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { deployReducer, fixtureSources, projectionActive, until, uploadProjection } from '../support/tenant-code';
import { WebhookReceiver } from '../support/webhook-receiver';
import { WsCollector } from '../support/stream-clients';

/**
 * DELETE /events/{aggregateId} (README "Erasure") over HTTP, on both stores, with a real reducer,
 * a real projection that handles `$erased`, and a real webhook receiver that is down while the
 * aggregate is erased: every place the data was is reached, nothing moves, nothing is appended after.
 */
jest.setTimeout(300_000);
afterAll(() => stopBackends(), 60_000);

const FAST = {
  LANE_SWEEP_MS: '200',
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_RETRY_BACKOFF_MS: '100,100,100,100,100,100,100,100,100,100',
  WEBHOOK_POLL_MS: '100',
};

/** Every personal value the test appends to the erased customer carries this marker. */
const SECRET = 'PII-ann';

describe.each(STORE_BACKENDS)('erasure over HTTP on %s', (backend) => {
  let svc: RunningService;
  let a: Client;
  let receiver: WebhookReceiver;
  let projectionId: string;
  const del = (path: string, key = a.key) => request(`${svc.url}${path}`, 'DELETE', undefined, { 'x-api-key': key });

  beforeAll(async () => {
    svc = await startService({ ...(await envFor(backend)), ...FAST });
    a = await newTenant(svc.url, 'erasure');
    receiver = await new WebhookReceiver().start();
    await deployReducer(svc.url, a.key, 'customers', fixtureSources('erasure', ['CustomerReducer.cs']));
    const up = await uploadProjection(svc.url, a.key, fixtureSources('erasure', ['CustomerDirectory.cs']), {
      notifications: { webhook: { url: receiver.url, isolateSecret: true } },
    });
    receiver.secrets = [up.notifications.webhook.secret];
    projectionId = await projectionActive(svc.url, a.key, up.uploadId);
  }, 300_000);
  afterAll(async () => {
    await svc?.close();
    await receiver?.stop();
  });

  it('reaches the log, the state, the notification log and a pending delivery; appends and state answer 410; $erased reaches the projection', async () => {
    const append = (aggregateId: string, eventType: string, data: object, extra: object = {}) =>
      a.post('/events', { aggregateId, eventType, data, ...extra });
    expect(
      (
        await append(
          'customer-ann',
          'Registered',
          { name: `${SECRET} Smith`, email: `${SECRET}@example.com` },
          { metadata: { ip: SECRET }, correlationId: 'signup-1' },
        )
      ).status,
    ).toBe(201);
    expect((await append('customer-bo', 'Registered', { name: 'Bo', email: 'bo@example.com' })).status).toBe(201);
    expect(
      (await a.post('/events/batch', { aggregateId: 'customer-ann', events: [{ eventType: 'Moved', data: { city: `${SECRET}-town` } }] }))
        .status,
    ).toBe(201);
    const state = async (key: string) => (await a.get(`/projections/${projectionId}/state/${key}`)).body;
    await until(
      () => state('customer-ann'),
      (s) => s.state?.events === 2,
      60_000,
      'the projection applied both events',
    );
    expect((await a.get('/aggregate-types/customer/customer-ann/state')).body.state).toMatchObject({ name: `${SECRET} Smith`, events: 2 });
    await until(
      () => receiver.accepted.length,
      (n) => n >= 3,
      60_000,
      'the first webhooks',
    );

    // The receiver goes down; the next change's delivery is attempted and fails, so it is pending during the erasure.
    receiver.down = true;
    expect((await append('customer-ann', 'Renamed', { name: `${SECRET} Jones` })).status).toBe(201);
    const pending = await until(
      async () => (await a.get(`/projections/${projectionId}/notifications?afterSequence=0`)).body.notifications as any[],
      (ns) => ns.some((n) => n.state.name === `${SECRET} Jones`),
      60_000,
      'the rename notification',
    );
    const renamed = pending.find((n) => n.state.name === `${SECRET} Jones`).sequence;
    await until(
      () => receiver.attempts.get(renamed) ?? 0,
      (n) => n >= 1,
      60_000,
      'a failed attempt of the pending delivery',
    );

    // A stream client before the erasure: the instance's stream tail now holds the customer's data too.
    const early = await WsCollector.open(svc.url, projectionId, a.key, 0);
    await until(
      () => early.raw.join('\n'),
      (t) => t.includes(`${SECRET} Jones`),
      60_000,
      'the stream before the erasure',
    );
    await early.close();

    const before = (await a.get('/events/customer-ann')).body.events as any[];
    expect(before).toHaveLength(3);

    const erased = await del('/events/customer-ann');
    expect(erased.status).toBe(200);
    expect(erased.body).toEqual({
      aggregateId: 'customer-ann',
      aggregateType: 'customer',
      version: 3,
      erasedAt: expect.stringMatching(/Z$/),
      erasedEvent: {
        eventId: expect.any(String),
        aggregateId: '$erasures',
        aggregateType: '$system',
        eventType: '$erased',
        position: 5,
        version: 1,
      },
    });

    // The log: tombstones in place (ids, versions, positions, types, timestamps, correlation), no data or metadata.
    const after = (await a.get('/events/customer-ann')).body.events as any[];
    expect(after).toEqual(before.map((e) => ({ ...e, data: {}, metadata: null, erasedAt: erased.body.erasedAt })));
    expect(JSON.stringify(after)).not.toContain(SECRET);
    // The system stream holds the $erased event at the position the erasure answered.
    const sys = (await a.get('/events/$erasures')).body.events as any[];
    expect(sys).toEqual([
      expect.objectContaining({
        eventId: erased.body.erasedEvent.eventId,
        aggregateType: '$system',
        eventType: '$erased',
        position: 5,
        data: { aggregateId: 'customer-ann', aggregateType: 'customer' },
      }),
    ]);

    // The state: 410; another customer's is untouched.
    const st = await a.get('/aggregate-types/customer/customer-ann/state');
    expect(st.status).toBe(410);
    expect(st.body).toMatchObject({ error: 'AGGREGATE_ERASED', aggregateId: 'customer-ann', erasedAt: erased.body.erasedAt });
    expect((await a.get('/aggregate-types/customer/customer-bo/state')).body.state).toMatchObject({ name: 'Bo' });

    // Appends: 410 alone, in a batch, and when sent together with appends to others (one group commit), which land.
    const together = await Promise.all([
      append('customer-ann', 'Renamed', { name: 'x' }),
      append('customer-bo', 'Renamed', { name: 'Bo B' }),
      a.post('/events/batch', { aggregateId: 'customer-ann', events: [{ eventType: 'Renamed', data: { name: 'y' } }] }),
      append('customer-ann', 'Renamed', { name: 'z' }, { expectedVersion: 3 }),
    ]);
    expect(together.map((r) => r.status)).toEqual([410, 201, 410, 410]);
    expect(together[0].body.error).toBe('AGGREGATE_ERASED');
    expect(together[1].body).toMatchObject({ version: 2, position: 6 }); // positions go on after the $erased event

    // The projection saw $erased and dropped the customer's entry.
    const entry = await until(
      () => state('customer-ann'),
      (s) => s.state?.erased === true,
      60_000,
      'the projection handled $erased',
    );
    expect(entry.state).toEqual({ name: '', email: '', events: 0, erased: true });

    // The notification log: every notification the customer's events caused now has the state {}.
    const log = (await a.get(`/projections/${projectionId}/notifications?afterSequence=0`)).body.notifications as any[];
    const caused = log.filter((n) => n.aggregateId === 'customer-ann');
    expect(caused.length).toBeGreaterThanOrEqual(3);
    expect(caused.every((n) => JSON.stringify(n.state) === '{}')).toBe(true);
    expect(JSON.stringify(log)).not.toContain(SECRET);

    // A stream from the start serves the same erased log (the tail's memory expires: see README "Erasure").
    const streamed = await until(
      async () => {
        const ws = await WsCollector.open(svc.url, projectionId, a.key, 0);
        await until(
          () => ws.messages.length,
          (n) => n >= log.length,
          30_000,
          'the stream from 0',
        );
        await ws.close();
        return ws.raw.join('\n');
      },
      (text) => !text.includes(SECRET),
      30_000,
      'a stream without the erased data',
    );
    expect(streamed).toContain('"aggregateId":"$erasures"');

    // The receiver comes back: the pending delivery arrives with the erased state, and nothing sent after the erasure holds the data.
    const erasedAtMs = Date.parse(erased.body.erasedAt);
    receiver.down = false;
    await until(
      () => receiver.sequences(),
      (s) => s.includes(renamed),
      60_000,
      'the pending delivery after the receiver came back',
    );
    const late = receiver.accepted.find((w) => w.sequence === renamed)!;
    expect(late.body).toMatchObject({ aggregateId: 'customer-ann' });
    expect(late.body.state).toEqual({});
    expect(receiver.attempts.get(renamed)).toBeGreaterThan(1); // it was pending (and failing) across the erasure
    for (const w of receiver.accepted.filter((x) => x.at >= erasedAtMs)) expect(w.raw.toString('utf8')).not.toContain(SECRET);
    await until(
      () => receiver.accepted.some((w) => w.body.aggregateId === '$erasures'),
      (ok) => ok,
      60_000,
      'the $erased notification',
    );

    // A second erasure answers the first one; an unknown aggregate is 404; the service's own stream is refused.
    const again = await del('/events/customer-ann');
    expect(again).toEqual({ status: 200, body: erased.body });
    expect((await del('/events/customer-nobody')).body.error).toBe('NOT_FOUND');
    expect((await del('/events/customer-nobody')).status).toBe(404);
    const reserved = await del('/events/$erasures');
    expect([reserved.status, reserved.body.error]).toEqual([400, 'RESERVED_NAME']);
  });

  it('refuses $-prefixed aggregate and event types from tenants, and erases only the caller’s own aggregate', async () => {
    for (const body of [
      { aggregateId: 'x-1', aggregateType: '$system', eventType: 'A', data: {} },
      { aggregateId: 'x-1', eventType: '$erased', data: {} },
    ]) {
      const r = await a.post('/events', body);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('VALIDATION_FAILED');
    }
    expect((await a.post('/events/batch', { aggregateId: 'x-1', events: [{ eventType: '$erased', data: {} }] })).status).toBe(400);
    const b = await newTenant(svc.url, 'other');
    expect((await b.post('/events', { aggregateId: 'customer-bo', eventType: 'Registered', data: { name: 'B2' } })).status).toBe(201);
    // Tenant b erasing its own customer-bo leaves tenant a's customer-bo alone.
    expect((await del('/events/customer-bo', b.key)).status).toBe(200);
    expect((await a.get('/events/customer-bo')).body.events[0].data).toMatchObject({ name: 'Bo' });
    expect((await a.get('/events/customer-bo')).body.events[0]).not.toHaveProperty('erasedAt');
  });
});

describe('erasure racing appends on two instances over one PostgreSQL', () => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await Cluster.start(2, { ...(await envFor('postgres')), LOG_LEVEL: 'warn', RUNTIME_COMPILER_HOSTS: '1' });
  }, 300_000);
  afterAll(() => cluster?.stop());

  it('lets every append either land before the erasure (and be erased) or be refused 410, never after it', async () => {
    const [urlA, urlB] = cluster.urls();
    const onA = await newTenant(urlA, 'race');
    const onB = clientFor(urlB, onA.key, onA.tenantId);
    for (let round = 0; round < 4; round++) {
      const id = `acct-race${round}`;
      // B appends first: its stream-version cache now holds the aggregate's version.
      expect((await onB.post('/events', { aggregateId: id, eventType: 'Opened', data: { owner: 'x' } })).status).toBe(201);
      // Three writers on B append until refused; the erasure on A goes out once a few have landed.
      let landedSoFar = 0;
      const statuses: number[] = [];
      const writer = async () => {
        for (let i = 0; ; i++) {
          const r = await onB.post('/events', { aggregateId: id, eventType: 'Deposited', data: { n: i } });
          statuses.push(r.status);
          if (r.status === 201) landedSoFar++;
          else return;
        }
      };
      const writers = Promise.all([writer(), writer(), writer()]);
      await until(
        () => landedSoFar,
        (n) => n >= 3,
        60_000,
        'appends landing before the erasure',
      );
      const erased = await request(`${urlA}/events/${id}`, 'DELETE', undefined, { 'x-api-key': onA.key });
      await writers;
      expect(erased.status).toBe(200);
      expect(statuses.every((s) => s === 201 || s === 410)).toBe(true);
      expect(statuses.filter((s) => s === 410)).toHaveLength(3); // each writer stopped at its first refusal
      const landed = statuses.filter((s) => s === 201).length;
      const events = (await onA.get(`/events/${id}`)).body.events as any[];
      expect(events.map((e) => e.version)).toEqual(Array.from({ length: landed + 1 }, (_, i) => i + 1));
      expect(events.every((e) => e.erasedAt === erased.body.erasedAt && JSON.stringify(e.data) === '{}')).toBe(true);
      expect(events.every((e) => e.position < erased.body.erasedEvent.position)).toBe(true);
      expect(erased.body.version).toBe(landed + 1);
      // Later appends through either instance are refused, B's cached version notwithstanding.
      for (const c of [onA, onB]) expect((await c.post('/events', { aggregateId: id, eventType: 'Deposited', data: {} })).status).toBe(410);
    }
  });
});
