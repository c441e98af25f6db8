import * as http from 'node:http';
import { ADMIN_TOKEN, Client, newTenant, request, ServiceProcess } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { projectionActive, until, uploadProjection } from '../support/tenant-code';

/**
 * Issue 15, "Keys and parameters", end to end over real HTTP against the built service as a child
 * process, on both stores: one state-key rule in bytes, path parameters that fit it, malformed
 * parameters refused in the error format (never a 500), bounded cursors and a validated replay body.
 */
jest.setTimeout(240_000);
afterAll(() => stopBackends(), 60_000);

const FAST = { LANE_RETRY_BACKOFF_MS: '20,20', LANE_SWEEP_MS: '200', PROJECTION_READ_WAIT_MS: '5000' };

/** The key is the event's own `key`; an event with `poison` fails its Apply (so its lane is held). */
const KEYED = `using EventSourcing;
namespace Keyed {
  public sealed class Count { public int N { get; set; } }
  public sealed record Tick(string Key, bool Poison);
  [ProjectionName("keyed")]
  public sealed class KeyedProjection : IProjection<Count> {
    public string? ResolveKey(Event e) => e.EventType == "Tick" ? e.DataAs<Tick>().Key : null;
    public Count Apply(Count s, Event e) {
      if (e.DataAs<Tick>().Poison) throw new System.InvalidOperationException("poison event");
      s.N++; return s;
    }
  }
}`;

/** 1,024 bytes of UTF-8 in 1,023 characters, with every character a path must escape. */
const KEY_1024_RESERVED = 'x'.repeat(1018) + '/?#%é';
/** 1,024 bytes in 342 characters: 3,070 characters once percent-encoded. */
const KEY_1024_EURO = '€'.repeat(341) + 'y';
/** n distinct CJK characters (3 bytes each): distinct so that PostgreSQL cannot compress the key into its index row. */
const cjk = (n: number, from = 0x4e00) => Array.from({ length: n }, (_, i) => String.fromCodePoint(from + i * 7)).join('');
/** 1,000 CJK characters: 3,000 bytes, over the rule (and over PostgreSQL's btree row of ~2,700 bytes on the base code). */
const KEY_CJK_1000 = cjk(1000);
/** 341 CJK characters: 1,023 bytes, within the rule. */
const KEY_CJK_341 = cjk(341, 0x6000);

const enc = encodeURIComponent;

/** A WebSocket upgrade of `path`; resolves with the refusal's status and body (or 101). */
function upgrade(url: string, path: string, key: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}${path}`, {
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        'x-api-key': key,
      },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      resolve({ status: 101, body: undefined });
    });
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error('upgrade timed out')));
    req.end();
  });
}

describe.each(STORE_BACKENDS)('keys and parameters on %s', (backend) => {
  let svc: ServiceProcess;
  let t: Client;
  let pid: string;

  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    request(`${svc.url}${path}`, method, body, { 'x-api-key': t.key, ...headers });
  const tick = (key: string, poison = false) => t.post('/events', { aggregateId: 'tick-1', eventType: 'Tick', data: { key, poison } });

  beforeAll(async () => {
    svc = new ServiceProcess({ ...(await envFor(backend)), ...FAST });
    await svc.start();
    t = await newTenant(svc.url, 'keys');
    const up = await uploadProjection(svc.url, t.key, [{ path: 'Keyed.cs', content: KEYED }], { sse: true });
    pid = await projectionActive(svc.url, t.key, up.uploadId);
  });
  afterAll(async () => {
    await svc?.kill('SIGTERM');
  });

  it('reads, retries and skips a held lane whose key is 1,024 bytes, however it is encoded', async () => {
    expect(Buffer.byteLength(KEY_1024_RESERVED)).toBe(1024);
    expect(Buffer.byteLength(KEY_1024_EURO)).toBe(1024);
    expect(enc(KEY_1024_EURO).length).toBe(3070);
    await tick(KEY_1024_RESERVED, true);
    const euro = await tick(KEY_1024_EURO);
    const after = await tick(KEY_1024_RESERVED);
    // A 1,024-byte key that works: its state reads over HTTP (3,070 characters of path parameter).
    const good = await call('GET', `/projections/${pid}/state/${enc(KEY_1024_EURO)}?minPosition=${euro.body.position}`);
    expect(good).toMatchObject({ status: 200, body: { stateKey: KEY_1024_EURO, state: { n: 1 } } });
    // The held one: listed with its exact key, read (no state yet), retried (held again), skipped.
    const held = await until(
      () => call('GET', `/projections/${pid}/lanes?held=true`),
      (r) => r.body.lanes?.length === 1,
    );
    expect(held.body.lanes[0]).toMatchObject({ key: KEY_1024_RESERVED, held: { error: expect.stringContaining('poison event') } });
    expect(await call('GET', `/projections/${pid}/state/${enc(KEY_1024_RESERVED)}`)).toMatchObject({
      status: 404,
      body: { error: 'NOT_FOUND' },
    });
    const retry = await call('POST', `/projections/${pid}/lanes/${enc(KEY_1024_RESERVED)}/retry`, {});
    expect(retry).toMatchObject({ status: 200, body: { key: KEY_1024_RESERVED, action: 'retry' } });
    await until(
      () => call('GET', `/projections/${pid}/lanes?held=true`),
      (r) => r.body.lanes?.length === 1,
    );
    const skip = await call('POST', `/projections/${pid}/lanes/${enc(KEY_1024_RESERVED)}/skip`, {});
    expect(skip).toMatchObject({ status: 200, body: { key: KEY_1024_RESERVED, action: 'skip' } });
    const state = await call('GET', `/projections/${pid}/state/${enc(KEY_1024_RESERVED)}?minPosition=${after.body.position}`);
    expect(state).toMatchObject({ status: 200, body: { stateKey: KEY_1024_RESERVED, state: { n: 1 } } });
    const keys = await call('GET', `/projections/${pid}/keys?limit=10`);
    expect(keys.body.keys).toEqual(expect.arrayContaining([KEY_1024_RESERVED, KEY_1024_EURO]));
    expect((await call('GET', `/projections/${pid}/lanes?held=true`)).body.lanes).toEqual([]);
  });

  it('holds a 1,000-character CJK key (3,000 bytes) in !unresolved with KEY_TOO_LONG and goes on; 341 CJK characters work', async () => {
    expect([Buffer.byteLength(KEY_CJK_1000), Buffer.byteLength(KEY_CJK_341)]).toEqual([3000, 1023]);
    const logFrom = svc.output.length;
    await tick(KEY_CJK_1000);
    const within = await tick(KEY_CJK_341);
    const next = await tick('after-cjk');
    // Never stuck: later events of other keys are applied (200, not 202 catching_up).
    const r = await call('GET', `/projections/${pid}/state/after-cjk?minPosition=${next.body.position}`);
    expect(r).toMatchObject({ status: 200, body: { state: { n: 1 } } });
    const cjk = await call('GET', `/projections/${pid}/state/${enc(KEY_CJK_341)}?minPosition=${within.body.position}`);
    expect(cjk).toMatchObject({ status: 200, body: { stateKey: KEY_CJK_341, state: { n: 1 } } });
    const held = await until(
      () => call('GET', `/projections/${pid}/lanes?held=true`),
      (x) => x.body.lanes?.length === 1,
    );
    expect(held.body.lanes[0]).toMatchObject({
      key: '!unresolved',
      held: { error: expect.stringMatching(/^KEY_TOO_LONG: a state key is at most 1024 bytes of UTF-8; this one is 3000/) },
    });
    const lag = await call('GET', `/projections/${pid}/status?include=lag`);
    expect(lag.body.activeVersion.applyLag).toMatchObject({ heldLanes: 1 });
    // The over-long key itself: refused in the error format, never 414 from the router outside it.
    expect(await call('GET', `/projections/${pid}/state/${enc(KEY_CJK_1000)}`)).toMatchObject({
      status: 414,
      body: { error: 'URI_TOO_LONG', limit: 1024 },
    });
    // Skipped, the unresolved lane is clear; the routing never failed in the store (no stack trace).
    expect((await call('POST', `/projections/${pid}/lanes/${enc('!unresolved')}/skip`, {})).status).toBe(200);
    // A stack: raw text (stderr), or in a JSON log line a "stack" field or a message with escaped newlines.
    expect(svc.output.slice(logFrom)).not.toMatch(/routing .* failed|\n\s+at |\\n\s+at |"stack"/);
  });

  it('answers a path parameter over 1,024 bytes 414 URI_TOO_LONG in the error format, whether the router or the rule sees it', async () => {
    for (const key of ['a'.repeat(1025), '€'.repeat(342), 'a'.repeat(3073), 'a'.repeat(5000)]) {
      for (const [method, path] of [
        ['GET', `/projections/${pid}/state/${enc(key)}`],
        ['POST', `/projections/${pid}/lanes/${enc(key)}/retry`],
        ['GET', `/events/${enc(key)}`],
      ]) {
        const r = await call(method, path, method === 'POST' ? {} : undefined);
        expect({ path: path.slice(0, 40), ...r }).toMatchObject({
          status: 414,
          body: { error: 'URI_TOO_LONG', field: 'path', limit: 1024, message: expect.any(String) },
        });
      }
    }
    // Without a key as well: the target is checked before anything else.
    expect(await request(`${svc.url}/projections/${pid}/state/${'a'.repeat(3073)}`, 'GET')).toMatchObject({
      status: 414,
      body: { error: 'URI_TOO_LONG' },
    });
  });

  it('answers NUL or non-UTF-8 in any path or query parameter 400 VALIDATION_FAILED, never 500', async () => {
    const logFrom = svc.output.length;
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const bad = ['a%00b', '%00', '%C3%28', '%ED%A0%80', '%zz'];
    for (const b of bad) {
      const cases: [string, string, unknown?, Record<string, string>?][] = [
        ['GET', `/projections/${b}/status`],
        ['GET', `/projections/${b}/state/k`],
        ['GET', `/projections/${pid}/state/${b}`],
        ['GET', `/projections/${pid}/state/k?minPosition=${b}`],
        ['GET', `/projections/${b}/notifications`],
        ['GET', `/projections/${pid}/notifications?afterSequence=${b}`],
        ['GET', `/projections/${pid}/keys?after=${b}`],
        ['GET', `/projections/${pid}/lanes?held=true&after=${b}`],
        ['POST', `/projections/${pid}/lanes/${b}/retry`, {}],
        ['POST', `/projections/${pid}/lanes/${b}/skip`, {}],
        ['GET', `/projections/${b}/stream`, undefined, { accept: 'text/event-stream' }],
        ['GET', `/projections/${pid}/stream?afterSequence=${b}`, undefined, { accept: 'text/event-stream' }],
        ['POST', `/projections/${b}/webhook/rotate`, {}],
        ['GET', `/projections/${b}/webhook/deliveries`],
        ['POST', `/projections/${b}/webhook/deliveries/replay`, {}],
        ['DELETE', `/projections/${b}`],
        ['GET', `/reducers/${b}/status`],
        ['GET', `/aggregate-types/${b}`],
        ['PUT', `/aggregate-types/${b}`, { reducerId: 'r' }],
        ['GET', `/aggregate-types/t/${b}/state`],
        ['GET', `/events/${b}`],
        ['GET', `/events/a?fromVersion=${b}`],
        ['GET', `/projections?x${b}=1`],
        ['GET', `/admin/tenants/${b}/limits`, undefined, admin],
        ['POST', `/admin/tenants/${b}/keys`, {}, admin],
        ['DELETE', `/admin/tenants/${t.tenantId}/keys/${b}`, undefined, admin],
      ];
      for (const [method, path, body, headers] of cases) {
        const r = await call(method, path, body, headers);
        expect({ method, path, ...r }).toMatchObject({
          method,
          path,
          status: 400,
          body: { error: 'VALIDATION_FAILED', message: expect.any(String) },
        });
      }
      // The WebSocket upgrade (not routed by Fastify) follows the same rule.
      expect({ b, ...(await upgrade(svc.url, `/projections/${b}/stream`, t.key)) }).toMatchObject({
        status: 400,
        body: { error: 'VALIDATION_FAILED' },
      });
      expect({ b, ...(await upgrade(svc.url, `/projections/${pid}/stream?afterSequence=0&x=${b}`, t.key)) }).toMatchObject({
        status: 400,
        body: { error: 'VALIDATION_FAILED' },
      });
    }
    // A well-formed upgrade still streams.
    expect((await upgrade(svc.url, `/projections/${pid}/stream?afterSequence=0`, t.key)).status).toBe(101);
    expect(svc.output.slice(logFrom)).not.toMatch(/INTERNAL|\n\s+at |\\n\s+at |"stack"/);
  });

  it('bounds minPosition and every cursor to Number.MAX_SAFE_INTEGER, answering at once', async () => {
    const past = '9007199254740992';
    const huge = '100000000000000000000000000';
    const started = Date.now();
    for (const v of [past, huge]) {
      for (const path of [
        `/projections/${pid}/state/after-cjk?minPosition=${v}`,
        `/projections/${pid}/notifications?afterSequence=${v}`,
        `/projections/${pid}/webhook/deliveries?afterSequence=${v}`,
        `/events/a?fromVersion=${v}`,
      ]) {
        expect({ path, ...(await call('GET', path)) }).toMatchObject({ status: 400, body: { error: 'VALIDATION_FAILED' } });
      }
      expect(await call('GET', `/projections/${pid}/stream`, undefined, { accept: 'text/event-stream', 'last-event-id': v })).toMatchObject(
        { status: 400, body: { error: 'VALIDATION_FAILED', field: 'Last-Event-ID' } },
      );
      expect(await upgrade(svc.url, `/projections/${pid}/stream?afterSequence=${v}`, t.key)).toMatchObject({
        status: 400,
        body: { error: 'VALIDATION_FAILED', field: 'afterSequence' },
      });
    }
    // Refused, not waited on (the read wait is 5 s).
    expect(Date.now() - started).toBeLessThan(4000);
    expect(await call('GET', `/projections/${pid}/state/after-cjk?minPosition=${huge}`)).toMatchObject({
      body: { field: 'minPosition', message: expect.stringContaining('9007199254740991') },
    });
    expect(await call('GET', `/projections/${pid}/keys?limit=1e2`)).toMatchObject({
      status: 400,
      body: { error: 'VALIDATION_FAILED', field: 'limit' },
    });
    // The largest is accepted.
    expect((await call('GET', `/projections/${pid}/notifications?afterSequence=9007199254740991`)).status).toBe(200);
  });

  it('validates the replay body: only a JSON object, `sequence` a positive safe integer', async () => {
    const path = `/projections/${pid}/webhook/deliveries/replay`;
    for (const body of ['[1,2]', '"x"', 'null', '1', 'true']) {
      expect({ sent: body, ...(await call('POST', path, body)) }).toMatchObject({
        status: 400,
        body: { error: 'VALIDATION_FAILED', field: 'body' },
      });
    }
    // No body at all is not "replay all" either.
    expect(await call('POST', path)).toMatchObject({ status: 400, body: { error: 'VALIDATION_FAILED', field: 'body' } });
    for (const sequence of ['x', 0, -1, 1.5, null, 2 ** 53, [1]]) {
      expect({ sequence, ...(await call('POST', path, { sequence })) }).toMatchObject({
        status: 400,
        body: { error: 'VALIDATION_FAILED', field: 'sequence' },
      });
    }
    expect(await call('POST', path, {})).toMatchObject({ status: 200, body: { projectionId: pid, replayed: 0 } });
    expect(await call('POST', path, { sequence: 1 })).toMatchObject({ status: 200, body: { projectionId: pid, replayed: 0 } });
  });
});
