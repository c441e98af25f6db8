import { newTenant, RunningService, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { SseCollector, WsCollector } from '../support/stream-clients';
import { signedOverBytes, WebhookReceiver } from '../support/webhook-receiver';
import { exactParse, expectStatus, rawAt, RawClient, rawClient, RawResult, stateOf } from '../support/raw-json';
import { deployReducer, exampleSources, fixtureSources, projectionActive, settle, uploadProjection } from '../support/tenant-code';

/**
 * Issue 11, "Facts kept exactly": every number a client writes comes back with exactly its digits
 * (reads, metadata, append responses), and the C# states come back as System.Text.Json wrote them
 * (`decimal` with its scale) through every path: aggregate state, projection state, polling,
 * WebSocket, SSE and a signed webhook. Responses are compared as text: JSON.parse would lose the
 * very digits under test.
 */

jest.setTimeout(180_000);
afterAll(() => stopBackends(), 60_000);

const FAST = {
  LANE_SWEEP_MS: '200',
  PROJECTION_READ_WAIT_MS: '10000',
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_RETRY_BACKOFF_MS: '50,50,50,50,50',
  WEBHOOK_POLL_MS: '100',
  STREAM_PING_MS: '1000',
  SSE_HEARTBEAT_MS: '300',
};

/** The issue's event data, verbatim: a 19-digit decimal, a trailing zero, decimal.MaxValue, 2^53 + 1. */
const ISSUE_DATA = '{"amount":12345678901234567.89,"price":79.90,"big":79228162514264337593543950335,"id":9007199254740993}';
/** A batch of such events: the extremes of decimal and long, scales 1 to 3. */
const BATCH_DATA = [
  '{"amount":0.10,"price":0.10,"big":-79228162514264337593543950335,"id":-9223372036854775808}',
  ISSUE_DATA,
  '{"amount":100.01,"price":1.000,"big":7922816251426433759354395033.5,"id":9223372036854775807}',
];
const METADATA = '{"rate":1.10,"seq":9007199254740993,"fee":{"amount":0.50,"exp":1E+2}}';

/** What test/fixtures/lossless/Payments.cs (reducer and projection alike) writes after each of those events. */
const PAY_1 = `{"last":${ISSUE_DATA},"total":12345678901234567.89,"count":1,"ids":[9007199254740993]}`;
const PAY_2 = [
  `{"last":${BATCH_DATA[0]},"total":0.10,"count":1,"ids":[-9223372036854775808]}`,
  `{"last":${BATCH_DATA[1]},"total":12345678901234567.99,"count":2,"ids":[-9223372036854775808,9007199254740993]}`,
  `{"last":${BATCH_DATA[2]},"total":12345678901234668.00,"count":3,"ids":[-9223372036854775808,9007199254740993,9223372036854775807]}`,
];

/** Orders for examples/customer-totals: line totals 19.95 + 2 × 0.30 = 20.55 and 79.90 + 0.05 = 79.95, together 100.50. */
const ORDER_1 = '{"customerId":"cust-a","lines":[{"sku":"x","qty":1,"price":19.95},{"sku":"y","qty":2,"price":0.30}]}';
const ORDER_2 = '{"customerId":"cust-a","lines":[{"sku":"z","qty":1,"price":79.90},{"sku":"w","qty":1,"price":0.05}]}';
const ORDER_3 = [
  '{"customerId":"cust-b","lines":[{"sku":"x","qty":1,"price":12345678901234567.89}]}',
  '{"sku":"v","qty":1,"price":0.11,"customerId":"cust-b"}',
];
const CUST_A = [
  '{"customerId":"cust-a","orderCount":1,"totalAmount":20.55,"orders":{"order-1":20.55}}',
  '{"customerId":"cust-a","orderCount":2,"totalAmount":100.50,"orders":{"order-1":20.55,"order-2":79.95}}',
];
const CUST_B = [
  '{"customerId":"cust-b","orderCount":1,"totalAmount":12345678901234567.89,"orders":{"order-3":12345678901234567.89}}',
  '{"customerId":"cust-b","orderCount":1,"totalAmount":12345678901234568.00,"orders":{"order-3":12345678901234568.00}}',
];

const event = (aggregateId: string, eventType: string, data: string, extra = '') =>
  `{"aggregateId":"${aggregateId}","eventType":"${eventType}","data":${data}${extra}}`;
const batch = (aggregateId: string, events: [string, string][], extra = '') =>
  `{"aggregateId":"${aggregateId}","events":[${events.map(([t, d]) => `{"eventType":"${t}","data":${d}}`).join(',')}]${extra}}`;

/** `projectionId/aggregateId/version` → exact state text, for the notifications in raw JSON `texts`. */
function statesByChange(texts: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const t of texts) {
    const n = exactParse(t);
    out[`${n.projectionId}/${n.aggregateId}/${n.version}`] = rawAt(t, ['state']);
  }
  return out;
}

describe.each(STORE_BACKENDS)('numbers kept exactly on %s', (backend) => {
  let svc: RunningService;
  let c: RawClient;
  let receiver: WebhookReceiver;
  const projections: Record<'payments' | 'totals', string> = { payments: '', totals: '' };
  const secrets = new Map<string, string>();
  const streams: { ws: WsCollector; sse: SseCollector }[] = [];
  /** The appends that feed both projections, made once in beforeAll, kept as received. */
  const appended: Record<string, RawResult> = {};
  let lastPosition = 0;
  /** Every change the two projections must notify, with its exact state. */
  let expectedChanges: Record<string, string>;
  const CHANGES = 8;
  /** Until when the notification tests wait for all changes before comparing what arrived. */
  let notifiedBy = 0;

  beforeAll(async () => {
    svc = await startService({ ...(await envFor(backend)), ...FAST });
    const t = await newTenant(svc.url, `lossless-${backend}`);
    c = rawClient(svc.url, t.key);
    receiver = await new WebhookReceiver().start();
    await deployReducer(svc.url, t.key, 'bank', exampleSources('bank-account'));
    await deployReducer(svc.url, t.key, 'payments', fixtureSources('lossless', ['Payments.cs', 'PaymentsReducer.cs']));
    const config = { notifications: { webhook: { url: receiver.url, isolateSecret: true }, sse: true } };
    for (const [name, sources] of [
      ['payments', fixtureSources('lossless', ['Payments.cs', 'PaymentsProjection.cs'])],
      ['totals', exampleSources('customer-totals')],
    ] as const) {
      const up = await uploadProjection(svc.url, t.key, sources, config);
      const id = await projectionActive(svc.url, t.key, up.uploadId);
      projections[name] = id;
      secrets.set(id, up.notifications.webhook.secret);
      streams.push({
        ws: await WsCollector.open(svc.url, id, t.key, 0),
        sse: await SseCollector.open(svc.url, id, t.key, {}, '?afterSequence=0'),
      });
    }
    receiver.secrets = [...secrets.values()];

    const appends: [string, string, string][] = [
      ['pay1', '/events', event('pay-1', 'Paid', ISSUE_DATA)],
      [
        'pay2',
        '/events/batch',
        batch(
          'pay-2',
          BATCH_DATA.map((d) => ['Paid', d]),
          `,"metadata":${METADATA}`,
        ),
      ],
      ['order1', '/events', event('order-1', 'OrderPlaced', ORDER_1)],
      ['order2', '/events', event('order-2', 'OrderPlaced', ORDER_2)],
      [
        'order3',
        '/events/batch',
        batch('order-3', [
          ['OrderPlaced', ORDER_3[0]],
          ['ItemAdded', ORDER_3[1]],
        ]),
      ],
    ];
    for (const [name, path, body] of appends) {
      appended[name] = expectStatus(await c.post(path, body), 201, name);
      const r = exactParse(appended[name].text);
      lastPosition = Math.max(lastPosition, Number(r.position ?? r.endPosition));
    }
    const [p, o] = [projections.payments, projections.totals];
    expectedChanges = {
      [`${p}/pay-1/1`]: PAY_1,
      ...Object.fromEntries(PAY_2.map((s, i) => [`${p}/pay-2/${i + 1}`, s])),
      [`${o}/order-1/1`]: CUST_A[0],
      [`${o}/order-2/1`]: CUST_A[1],
      [`${o}/order-3/1`]: CUST_B[0],
      [`${o}/order-3/2`]: CUST_B[1],
    };
    notifiedBy = Date.now() + 30_000;
  }, 240_000);

  afterAll(async () => {
    for (const s of streams) {
      await s.ws.close();
      s.sse.close();
    }
    await svc?.close();
    await receiver?.stop();
  });

  it('reads the issue’s event back with every digit', async () => {
    const read = expectStatus(await c.get('/events/pay-1'), 200);
    expect(rawAt(read.text, ['events', 0, 'data'])).toBe(ISSUE_DATA);
    // The same on an aggregate type without a reducer (the append path the issue shows).
    expectStatus(await c.post('/events', event('plain-1', 'Paid', ISSUE_DATA)), 201);
    expect(rawAt((await c.get('/events/plain-1')).text, ['events', 0, 'data'])).toBe(ISSUE_DATA);
  });

  it('reads a batch of such events and its metadata back with every digit', async () => {
    const read = expectStatus(await c.get('/events/pay-2'), 200);
    expect(BATCH_DATA.map((_, i) => rawAt(read.text, ['events', i, 'data']))).toEqual(BATCH_DATA);
    expect(BATCH_DATA.map((_, i) => rawAt(read.text, ['events', i, 'metadata']))).toEqual(BATCH_DATA.map(() => METADATA));
  });

  it('keeps metadata numbers of a single append', async () => {
    const metadata = '{"amount":79.90,"id":9007199254740993,"zero":-0}';
    expectStatus(await c.post('/events', event('meta-1', 'Noted', '{"n":100.50}', `,"metadata":${metadata}`)), 201);
    const read = await c.get('/events/meta-1');
    expect(rawAt(read.text, ['events', 0, 'metadata'])).toBe(metadata);
    expect(rawAt(read.text, ['events', 0, 'data'])).toBe('{"n":100.50}');
  });

  it('keeps exponents, negative zero and key order as written, and only drops whitespace', async () => {
    const data = `{ "e": 1E+2, "f": -0, "g": -0.0, "h": 1.5e-7, "i": 0.000, "j": 1e400, "z": 1,\n  "a": [ 1.0 , 2.50 , -0 ], "m": { "y": 10.00, "x": {} } }`;
    const compact = '{"e":1E+2,"f":-0,"g":-0.0,"h":1.5e-7,"i":0.000,"j":1e400,"z":1,"a":[1.0,2.50,-0],"m":{"y":10.00,"x":{}}}';
    expectStatus(await c.post('/events', `{ "aggregateId": "shape-1",\n "eventType": "Shapes", "data": ${data} }`), 201);
    expect(rawAt((await c.get('/events/shape-1')).text, ['events', 0, 'data'])).toBe(compact);
  });

  it('keeps the order of integer-like keys (which a JavaScript object would move first)', async () => {
    const data = '{"b":1.10,"10":2,"a":3,"2":4.0}';
    expectStatus(await c.post('/events', event('shape-2', 'Keys', data)), 201);
    expect(rawAt((await c.get('/events/shape-2')).text, ['events', 0, 'data'])).toBe(data);
  });

  it('keeps string escapes as sent', async () => {
    expectStatus(await c.post('/events', event('shape-3', 'Escapes', '{"s":"a\\/b\\u0041\\u00e9 \\"q\\"","n":1.10}')), 201);
    expect(rawAt((await c.get('/events/shape-3')).text, ['events', 0, 'data'])).toBe('{"s":"a\\/b\\u0041\\u00e9 \\"q\\"","n":1.10}');
  });

  it('still validates: data must be an object, nesting up to 32 levels, size limits', async () => {
    // `data` itself is level 1: a number inside the 32nd level is accepted, one level more is not.
    const nested = (levels: number) => '{"a":'.repeat(levels - 1) + '{"n":1.50}' + '}'.repeat(levels - 1);
    // Over 256 KiB however it is measured: 350,000 bytes as written, 280,000 with "1.1" for "1.10".
    const large = `{"xs":[${Array.from({ length: 70_000 }, () => '1.10').join(',')}]}`;
    const cases: [string, string, string][] = [
      ['data a number', '/events', event('bad-1', 'X', '1.0')],
      ['data a long decimal', '/events', event('bad-1', 'X', '12345678901234567.89')],
      ['data an array', '/events', event('bad-1', 'X', '[1.10]')],
      ['metadata a number', '/events', event('bad-1', 'X', '{}', ',"metadata":1.0')],
      [
        'batch data a number',
        '/events/batch',
        batch('bad-1', [
          ['X', '{}'],
          ['X', '2.50'],
        ]),
      ],
      ['data 33 levels deep', '/events', event('bad-1', 'X', nested(33))],
      ['metadata 33 levels deep', '/events', event('bad-1', 'X', '{}', `,"metadata":${nested(33)}`)],
      ['data too large', '/events', event('bad-1', 'X', large)],
    ];
    const outcomes: Record<string, unknown> = {};
    for (const [what, path, body] of cases) {
      const res = await c.post(path, body);
      const b = res.status < 300 ? {} : exactParse(res.text);
      outcomes[what] = { status: res.status, error: b.error, field: b.field };
    }
    const refused = (status: number, error: string, field: string) => ({ status, error, field });
    expect(outcomes).toEqual({
      'data a number': refused(400, 'VALIDATION_FAILED', 'data'),
      'data a long decimal': refused(400, 'VALIDATION_FAILED', 'data'),
      'data an array': refused(400, 'VALIDATION_FAILED', 'data'),
      'metadata a number': refused(400, 'VALIDATION_FAILED', 'metadata'),
      'batch data a number': refused(400, 'VALIDATION_FAILED', 'events[1].data'),
      'data 33 levels deep': refused(400, 'VALIDATION_FAILED', 'data'),
      'metadata 33 levels deep': refused(400, 'VALIDATION_FAILED', 'metadata'),
      'data too large': refused(413, 'PAYLOAD_TOO_LARGE', 'data'),
    });
    expect(rawAt((await c.get('/events/bad-1')).text, ['events'])).toBe('[]');

    expectStatus(await c.post('/events', event('deep-1', 'X', nested(32))), 201);
    expect(rawAt((await c.get('/events/deep-1')).text, ['events', 0, 'data'])).toBe(nested(32));
  });

  it('returns a decimal reducer state with its scale, 100.50 not 100.5, on every append and read', async () => {
    const seen: Record<string, string> = {};
    for (const [i, [type, data]] of [
      ['AccountOpened', '{"owner":"ada"}'],
      ['MoneyDeposited', '{"amount":100.25}'],
      ['MoneyDeposited', '{"amount":0.25}'],
    ].entries()) {
      seen[`single append ${i + 1}`] = stateOf(await c.post('/events', event('account-1', type, data)));
    }
    seen['read after single appends'] = stateOf(await c.get('/aggregate-types/account/account-1/state'));
    const inOne = batch('account-2', [
      ['AccountOpened', '{"owner":"bo"}'],
      ['MoneyDeposited', '{"amount":100.25}'],
      ['MoneyDeposited', '{"amount":0.25}'],
      ['MoneyWithdrawn', '{"amount":0.50}'],
    ]);
    seen['batch append'] = stateOf(await c.post('/events/batch', inOne));
    seen['read after batch'] = stateOf(await c.get('/aggregate-types/account/account-2/state'));
    const max = batch('account-3', [
      ['AccountOpened', '{"owner":"cy"}'],
      ['MoneyDeposited', '{"amount":79228162514264337593543950335}'],
    ]);
    seen['decimal.MaxValue append'] = stateOf(await c.post('/events/batch', max));
    seen['decimal.MaxValue read'] = stateOf(await c.get('/aggregate-types/account/account-3/state'));

    expect(seen).toEqual({
      'single append 1': '{"owner":"ada","balance":0,"transactions":0}',
      'single append 2': '{"owner":"ada","balance":100.25,"transactions":1}',
      'single append 3': '{"owner":"ada","balance":100.50,"transactions":2}',
      'read after single appends': '{"owner":"ada","balance":100.50,"transactions":2}',
      'batch append': '{"owner":"bo","balance":100.00,"transactions":3}',
      'read after batch': '{"owner":"bo","balance":100.00,"transactions":3}',
      'decimal.MaxValue append': '{"owner":"cy","balance":79228162514264337593543950335,"transactions":1}',
      'decimal.MaxValue read': '{"owner":"cy","balance":79228162514264337593543950335,"transactions":1}',
    });
  });

  it('returns the issue’s numbers in the append responses and the aggregate state of a C# reducer', async () => {
    expect({
      'pay-1 append': stateOf(appended.pay1),
      'pay-1 read': stateOf(await c.get('/aggregate-types/pay/pay-1/state')),
      'pay-2 batch append': stateOf(appended.pay2),
      'pay-2 read': stateOf(await c.get('/aggregate-types/pay/pay-2/state')),
    }).toEqual({ 'pay-1 append': PAY_1, 'pay-1 read': PAY_1, 'pay-2 batch append': PAY_2[2], 'pay-2 read': PAY_2[2] });
  });

  it('returns projection states exactly (customer totals of 100.50, the issue’s numbers)', async () => {
    const state = async (projectionId: string, key: string) =>
      stateOf(await c.get(`/projections/${projectionId}/state/${key}?minPosition=${lastPosition}`));
    expect({
      'cust-a': await state(projections.totals, 'cust-a'),
      'cust-b': await state(projections.totals, 'cust-b'),
      'pay-1': await state(projections.payments, 'pay-1'),
      'pay-2': await state(projections.payments, 'pay-2'),
    }).toEqual({ 'cust-a': CUST_A[1], 'cust-b': CUST_B[1], 'pay-1': PAY_1, 'pay-2': PAY_2[2] });
  });

  it('notifies every state exactly when polled', async () => {
    const poll = async () => {
      const texts: string[] = [];
      for (const id of Object.values(projections)) {
        const res = expectStatus(await c.get(`/projections/${id}/notifications?afterSequence=0`), 200);
        const count = exactParse(res.text).notifications.length;
        for (let i = 0; i < count; i++) texts.push(rawAt(res.text, ['notifications', i]));
      }
      return texts;
    };
    expect(statesByChange(await settle(poll, (t) => t.length >= CHANGES, notifiedBy))).toEqual(expectedChanges);
  });

  it('streams every state exactly over WebSocket', async () => {
    const texts = await settle(
      () => streams.flatMap((s) => s.ws.raw),
      (t) => t.length >= CHANGES,
      notifiedBy,
    );
    expect(statesByChange(texts)).toEqual(expectedChanges);
  });

  it('streams every state exactly over server-sent events', async () => {
    const changes = () => streams.flatMap((s) => s.sse.events.filter((e) => e.event === 'state_changed').map((e) => e.raw));
    expect(statesByChange(await settle(changes, (t) => t.length >= CHANGES, notifiedBy))).toEqual(expectedChanges);
  });

  it('delivers every state exactly in a webhook whose signature verifies over the bytes received', async () => {
    await settle(
      () => receiver.accepted.length,
      (n) => n >= CHANGES,
      notifiedBy,
    );
    for (const a of receiver.accepted) {
      const projectionId = String(exactParse(a.raw.toString('utf8')).projectionId);
      expect(signedOverBytes(secrets.get(projectionId)!, a.headers, a.raw)).toBe(true);
    }
    expect(receiver.rejectedSignatures).toBe(0);
    expect(statesByChange(receiver.accepted.map((a) => a.raw.toString('utf8')))).toEqual(expectedChanges);
  });
});
