import { AGGREGATE_ID_MAX_BYTES } from '../../src/events/aggregate-id';
import { Client, newTenant, request, RunningService, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { SseCollector } from '../support/stream-clients';
import { deployReducer, fixtureSources, projectionActive, until, uploadProjection } from '../support/tenant-code';
import { WebhookReceiver } from '../support/webhook-receiver';

jest.setTimeout(240_000);
afterAll(() => stopBackends(), 60_000);

const FAST = {
  LANE_SWEEP_MS: '200',
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_RETRY_BACKOFF_MS: '50,50,50,50,50',
  WEBHOOK_POLL_MS: '100',
};

/** A 4-byte character (U+1F600) repeated to exactly the limit. */
const FOUR_BYTE_AT_LIMIT = '\u{1F600}'.repeat(AGGREGATE_ID_MAX_BYTES / 4);
/** Every id goes through every route: append, batch, read, state, a reducer, a projection, its notifications, stream and webhook. */
const IDS = ['compte-é-ü-日本', 'acct/42', 'acct 42', 'emoji \u{1F680}\u{1F469}\u200d\u{1F4BB}', '%2F?#&+', FOUR_BYTE_AT_LIMIT];
const path = (id: string) => encodeURIComponent(id);

describe.each(STORE_BACKENDS)('Unicode aggregate ids through every route on %s', (backend) => {
  let svc: RunningService;
  let c: Client;
  let receiver: WebhookReceiver;
  let sse: SseCollector;
  let projectionId: string;

  beforeAll(async () => {
    svc = await startService({ ...(await envFor(backend)), ...FAST });
    c = await newTenant(svc.url, `unicode-${backend}`);
    receiver = await new WebhookReceiver().start();
    await deployReducer(svc.url, c.key, 'id-echo', fixtureSources('unicode-ids', ['IdState.cs', 'IdEchoReducer.cs']));
    const up = await uploadProjection(svc.url, c.key, fixtureSources('unicode-ids', ['IdState.cs', 'IdEchoProjection.cs']), {
      notifications: { webhook: { url: receiver.url }, sse: true },
    });
    receiver.secrets = [up.notifications.webhook.secret];
    projectionId = await projectionActive(svc.url, c.key, up.uploadId);
    sse = await SseCollector.open(svc.url, projectionId, c.key);
  });
  afterAll(async () => {
    sse?.close();
    await svc?.close();
    await receiver?.stop();
  });

  it('keeps each id byte for byte through append, batch, read, state, reducer, projection, notifications, SSE and webhook', async () => {
    expect(Buffer.byteLength(FOUR_BYTE_AT_LIMIT)).toBe(AGGREGATE_ID_MAX_BYTES);
    let lastPosition = 0;
    for (const id of IDS) {
      const one = await c.post('/events', { aggregateId: id, aggregateType: 'acct', eventType: 'Opened', data: { n: 1 } });
      expect({ id, status: one.status }).toEqual({ id, status: 201 });
      expect(one.body).toMatchObject({ aggregateId: id, aggregateType: 'acct', version: 1, state: { id, count: 1 } });
      const batch = await c.post('/events/batch', {
        aggregateId: id,
        events: [
          { eventType: 'Moved', data: { n: 2 } },
          { eventType: 'Moved', data: { n: 3 } },
        ],
      });
      expect({ id, status: batch.status }).toEqual({ id, status: 201 });
      expect(batch.body).toMatchObject({ aggregateId: id, startVersion: 2, endVersion: 3, state: { id, count: 3 } });
      lastPosition = batch.body.endPosition;

      const read = await c.get(`/events/${path(id)}`);
      expect({ id, status: read.status }).toEqual({ id, status: 200 });
      expect(read.body.events.map((e: any) => [e.aggregateId, e.version])).toEqual([
        [id, 1],
        [id, 2],
        [id, 3],
      ]);
      const state = await c.get(`/aggregate-types/acct/${path(id)}/state`);
      expect({ id, status: state.status }).toEqual({ id, status: 200 });
      expect(state.body).toMatchObject({ aggregateId: id, aggregateType: 'acct', version: 3, state: { id, count: 3 } });
    }

    for (const id of IDS) {
      const p = await c.get(`/projections/${projectionId}/state/${path(`k:${id}`)}?minPosition=${lastPosition}`);
      expect({ id, status: p.status, state: p.body.state }).toEqual({ id, status: 200, state: { id, count: 3 } });
    }
    // Three notifications per id (one per event), in the log, on the stream and at the webhook.
    const expected = IDS.flatMap((id) => [id, id, id]);
    // Each key is its own lane: the log's sequence interleaves keys as their lanes commit, so the
    // notifications are compared as a multiset of (id, version), each carrying its own id throughout.
    const sorted = (xs: string[]) => [...xs].sort();
    const expectedPairs = sorted(IDS.flatMap((id) => [1, 2, 3].map((v) => `${id}|${v}`)));
    const log = await c.get(`/projections/${projectionId}/notifications?limit=100`);
    expect(sorted(log.body.notifications.map((n: any) => `${n.aggregateId}|${n.version}`))).toEqual(expectedPairs);
    for (const n of log.body.notifications) expect([n.stateKey, n.state.id]).toEqual([`k:${n.aggregateId}`, n.aggregateId]);
    await until(
      () => sse.sequences().length,
      (n) => n >= expected.length,
      60_000,
      'SSE messages',
    );
    const changes = sse.events.filter((e) => e.event === 'state_changed');
    expect(sorted(changes.map((e) => `${e.data.aggregateId}|${e.data.version}`))).toEqual(expectedPairs);
    const hooks = await until(
      () => receiver.accepted,
      (a) => a.length >= expected.length,
      60_000,
      'webhooks',
    );
    // The keys' deliveries interleave too.
    expect(sorted(hooks.map((h) => h.body.aggregateId))).toEqual(sorted(expected));
    expect(sorted(hooks.map((h) => h.body.state.id))).toEqual(sorted(expected));
  });

  it('reads `acct%2F42` as acct/42, and `acct/42` unencoded is another path', async () => {
    const read = await c.get('/events/acct%2F42');
    expect(read.status).toBe(200);
    expect(read.body.events[0].aggregateId).toBe('acct/42');
    expect((await c.get('/events/acct/42')).status).toBe(404);
    // '+' in a path is a plus, '%20' a space.
    expect((await c.get('/events/acct%2042')).body.events[0].aggregateId).toBe('acct 42');
  });

  it('keeps each id through the log read, backwards, and erasure by its percent-encoded path', async () => {
    const log = await c.get('/events?aggregateType=acct&limit=10000');
    expect(log.status).toBe(200);
    const ids = [...new Set(log.body.events.map((e: any) => e.aggregateId))];
    expect(ids).toEqual(IDS);
    const back = await c.get(`/events/${path('compte-é-ü-日本')}?direction=backward&limit=1`);
    expect([back.status, back.body.events[0].aggregateId, back.body.events[0].version]).toEqual([200, 'compte-é-ü-日本', 3]);
    const id = 'emoji \u{1F680}\u{1F469}\u200d\u{1F4BB}';
    const erased = await request(`${svc.url}/events/${path(id)}`, 'DELETE', undefined, { 'x-api-key': c.key });
    expect([erased.status, erased.body.aggregateId]).toEqual([200, id]);
    const system = await c.get('/events/%24erasures');
    expect(system.body.events.map((e: any) => e.data)).toContainEqual({ aggregateId: id, aggregateType: 'acct' });
    expect((await c.get(`/aggregate-types/acct/${path(id)}/state`)).status).toBe(410);
  });

  it('stores exactly what was sent: NFC and NFD spellings are two aggregates; an id is never trimmed', async () => {
    const nfc = 'caf\u00e9';
    const nfd = 'cafe\u0301';
    for (const id of [nfc, nfd, ' padded ']) {
      const r = await c.post('/events', { aggregateId: id, aggregateType: 'misc', eventType: 'X', data: {} });
      expect({ id, status: r.status, version: r.body.version, aggregateId: r.body.aggregateId }).toEqual({
        id,
        status: 201,
        version: 1,
        aggregateId: id,
      });
    }
    for (const id of [nfc, nfd, ' padded ']) {
      const r = await c.get(`/events/${path(id)}`);
      expect(r.body.events.map((e: any) => e.aggregateId)).toEqual([id]);
    }
  });

  it('infers the type from the head of the id, or `aggregate` when the head is no type', async () => {
    const r1 = await c.post('/events', { aggregateId: 'compte-é-ü-日本-2', eventType: 'X', data: {} });
    expect(r1.body.aggregateType).toBe('compte');
    const r2 = await c.post('/events', { aggregateId: '日本-2', eventType: 'X', data: {} });
    expect(r2.body.aggregateType).toBe('aggregate');
  });

  it('refuses more than the limit in UTF-8 bytes, control characters and unpaired surrogates with 400 VALIDATION_FAILED', async () => {
    const tooLong = [FOUR_BYTE_AT_LIMIT + 'a', 'é'.repeat(AGGREGATE_ID_MAX_BYTES / 2 + 1)];
    const controls = ['a\u0001b', 'tab\t', 'nl\n', 'del\u007f', 'c1\u0085', 'c1\u009f'];
    for (const id of [...tooLong, ...controls, '']) {
      const one = await c.post('/events', { aggregateId: id, eventType: 'X', data: {} });
      const batch = await c.post('/events/batch', { aggregateId: id, events: [{ eventType: 'X', data: {} }] });
      for (const [route, r] of [
        ['append', one],
        ['batch', batch],
      ] as const)
        expect({ id, route, status: r.status, error: r.body.error, field: r.body.field }).toEqual({
          id,
          route,
          status: 400,
          error: 'VALIDATION_FAILED',
          field: 'aggregateId',
        });
    }
    for (const id of [...tooLong, ...controls]) {
      const read = await c.get(`/events/${path(id)}`);
      expect({ id, status: read.status, error: read.body.error, field: read.body.field }).toEqual({
        id,
        status: 400,
        error: 'VALIDATION_FAILED',
        field: 'aggregateId',
      });
      const state = await c.get(`/aggregate-types/acct/${path(id)}/state`);
      expect({ id, status: state.status, error: state.body.error, field: state.body.field }).toEqual({
        id,
        status: 400,
        error: 'VALIDATION_FAILED',
        field: 'id',
      });
    }
    // An unpaired surrogate can only be sent as a JSON escape (UTF-8 cannot carry it).
    const lone = await request(`${svc.url}/events`, 'POST', '{"aggregateId":"a\\ud800","eventType":"X","data":{}}', {
      'x-api-key': c.key,
      'content-type': 'application/json',
    });
    expect(lone).toMatchObject({ status: 400, body: { error: 'VALIDATION_FAILED', field: 'aggregateId' } });
    // ...and in a path, as the UTF-8 encoding of a surrogate, which is not UTF-8.
    expect((await c.get('/events/a%ED%A0%80')).status).toBe(400);
  });
});
