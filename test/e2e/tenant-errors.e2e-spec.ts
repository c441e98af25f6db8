import { Client, newTenant, RunningService, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { zipSources } from '../support/zip-writer';
import { until } from '../support/wait';

/**
 * Issue 27, item 6: errors that point at the line. A reducer throwing at a known line answers its
 * exception type, the event (type, id, version, position) and the tenant's own frames with file and
 * line — no host frame; a held projection lane names the event it is held on (lanes listing, status)
 * and a minPosition read on it answers the hold at once (409 PROJECTION_LANE_HELD) instead of waiting
 * out PROJECTION_READ_WAIT_MS; GET /reducers and GET /aggregate-types list what exists. Both stores.
 */
jest.setTimeout(300_000);
afterAll(() => stopBackends(), 60_000);

// Line numbers matter: Wallet.cs line 12 calls Limits.Check; Rules/Limits.cs line 8 throws.
const WALLET = `using EventSourcing;
namespace Bank;
public sealed class Wallet { public long Balance { get; set; } }
[AggregateType("wallet")]
public sealed class WalletReducer : IReducer<Wallet>
{
    public Wallet Apply(Wallet s, Event e)
    {
        var amount = e.Data.GetProperty("amount").GetInt64();
        if (e.EventType == "Deposited") s.Balance += amount;
        if (e.EventType == "Withdrawn")
            s.Balance = Limits.Check(s.Balance - amount);
        return s;
    }
}
`;
const LIMITS = `namespace Bank;
static class Limits
{
    public static long Check(long balance)
    {
        if (balance < 0)
        {
            throw new InvalidOperationException($"overdraft: {balance}");
        }
        return balance;
    }
}
`;

// Apply throws on line 9 for a poisoned event; its key is the event's "key" field.
const POISON = `using EventSourcing;
namespace Ticks;
public sealed class Count { public int N { get; set; } }
public sealed class PoisonProjection : IProjection<Count>
{
    public string? ResolveKey(Event e) => e.Data.GetProperty("key").GetString();
    public Count Apply(Count s, Event e)
    {
        if (e.Data.GetProperty("poison").GetBoolean()) throw new ArgumentOutOfRangeException("poison", "a poisoned tick");
        s.N++;
        return s;
    }
}
`;

/** The runtime-failure fields expected of Wallet's overdraft on `event`. */
function overdraft(event: { eventId: string; version: number; position: number }) {
  return {
    exceptionType: 'System.InvalidOperationException',
    eventType: 'Withdrawn',
    eventId: event.eventId,
    version: event.version,
    position: event.position,
    frames: [
      { method: 'Bank.Limits.Check', file: 'Rules/Limits.cs', line: 8 },
      { method: 'Bank.WalletReducer.Apply', file: 'Wallet.cs', line: 12 },
    ],
  };
}

async function uploadReducer(url: string, c: Client, reducerId: string): Promise<void> {
  const form = new FormData();
  form.append(
    'file',
    new Blob([
      zipSources([
        { path: 'Wallet.cs', content: WALLET },
        { path: 'Rules/Limits.cs', content: LIMITS },
      ]),
    ]),
    'r.zip',
  );
  form.append('reducerId', reducerId);
  const res = await fetch(`${url}/reducers/upload`, { method: 'POST', headers: { 'x-api-key': c.key }, body: form });
  expect(res.status).toBe(202);
  // Compiled, then auto-bound to its aggregate type.
  await until(
    () => c.get('/aggregate-types/wallet'),
    (r) => r.body?.reducerId === reducerId,
    120_000,
    'the reducer bound',
  );
}

async function deployProjection(url: string, c: Client): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([zipSources([{ path: 'Poison.cs', content: POISON }])]), 'p.zip');
  const res = await fetch(`${url}/projections/upload`, { method: 'POST', headers: { 'x-api-key': c.key }, body: form });
  const { uploadId } = (await res.json()) as { uploadId: string };
  const st = await until(
    () => c.get(`/projections/${uploadId}/status`),
    (r) => r.body?.status === 'failed' || (r.body?.status === 'compiled' && r.body?.projectionId),
    120_000,
    'the projection deployed',
  );
  if (!st.body.projectionId) throw new Error(`not deployed: ${JSON.stringify(st.body)}`);
  return st.body.projectionId;
}

describe.each(STORE_BACKENDS)('errors that point at the line on %s', (backend) => {
  const READ_WAIT_MS = 20_000;
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startService({
      ...(await envFor(backend)),
      LANE_RETRY_BACKOFF_MS: '20,20',
      LANE_SWEEP_MS: '200',
      PROJECTION_READ_WAIT_MS: String(READ_WAIT_MS),
    });
  });
  afterAll(() => svc?.close());

  it("a throwing reducer's failure names its exception, its event and the tenant's file and line, and no host frame", async () => {
    const c = await newTenant(svc.url, `errors-reducer-${backend}`);
    // History the reducer cannot fold, stored before any reducer is bound.
    const opened = await c.post('/events', { aggregateId: 'w-1', aggregateType: 'wallet', eventType: 'Deposited', data: { amount: 5 } });
    const withdrawn = await c.post('/events', { aggregateId: 'w-1', eventType: 'Withdrawn', data: { amount: 7 } });
    expect([opened.status, withdrawn.status]).toEqual([201, 201]);
    await uploadReducer(svc.url, c, 'wallet-v1');

    // The state read of the aggregate whose history cannot be folded.
    const read = await c.get('/aggregate-types/wallet/w-1/state');
    expect(read.status).toBe(422);
    expect(read.body).toMatchObject({
      error: 'REDUCER_FAILED',
      failedVersion: 2,
      reducerError: 'APPLY_FAILED: overdraft: -2',
      ...overdraft(withdrawn.body),
    });
    expect(read.body.frames).toHaveLength(2); // the tenant's two frames, nothing of the host's

    // An append whose event the reducer throws on is refused (422 REDUCER_REJECTED, nothing stored), with the same fields.
    await c.post('/events', { aggregateId: 'w-2', aggregateType: 'wallet', eventType: 'Deposited', data: { amount: 1 } });
    const refused = await c.post('/events', { aggregateId: 'w-2', eventType: 'Withdrawn', data: { amount: 3 } });
    expect(refused.status).toBe(422);
    const failure = refused.body;
    expect(failure).toMatchObject({
      error: 'REDUCER_REJECTED',
      reducerError: 'APPLY_FAILED: overdraft: -2',
      exceptionType: 'System.InvalidOperationException',
      eventType: 'Withdrawn',
      version: 2,
    });
    expect(failure.frames).toEqual(overdraft(withdrawn.body).frames);
    expect(JSON.stringify(failure)).not.toMatch(/EventSourcing\.Runtime|System\.Private|at EventSourcing/);
    expect((await c.get('/events/w-2')).body.events).toHaveLength(1);
  });

  it('a held lane names its event, and a minPosition read on it answers the hold at once', async () => {
    const c = await newTenant(svc.url, `errors-lane-${backend}`);
    const pid = await deployProjection(svc.url, c);
    const good = await c.post('/events', { aggregateId: 't-1', eventType: 'Tick', data: { key: 'k', poison: false } });
    const bad = await c.post('/events', { aggregateId: 't-2', eventType: 'Tick', data: { key: 'k', poison: true } });
    const later = await c.post('/events', { aggregateId: 't-3', eventType: 'Tick', data: { key: 'k', poison: false } });
    expect([good.status, bad.status, later.status]).toEqual([201, 201, 201]);

    const held = await until(
      () => c.get(`/projections/${pid}/lanes?held=true`),
      (r) => r.body?.lanes?.length === 1,
      60_000,
      'the lane held',
    );
    const hold = {
      position: bad.body.position,
      eventId: bad.body.eventId,
      aggregateId: 't-2',
      eventType: 'Tick',
      error: expect.stringContaining('a poisoned tick'),
      // Kept with the hold: the exception, the event's version and the tenant's frame.
      exceptionType: 'System.ArgumentOutOfRangeException',
      version: 1,
      frames: [{ method: 'Ticks.PoisonProjection.Apply', file: 'Poison.cs', line: 9 }],
    };
    expect(held.body.lanes[0]).toMatchObject({ key: 'k', held: hold });
    const status = await c.get(`/projections/${pid}/status?include=lag`);
    expect(status.body.activeVersion.applyLag).toMatchObject({ heldLanes: 1, firstHeld: { key: 'k', ...hold } });

    // Read-your-writes past the hold: answered at once, not after READ_WAIT_MS.
    const started = Date.now();
    const read = await c.get(`/projections/${pid}/state/k?minPosition=${later.body.position}`);
    expect(Date.now() - started).toBeLessThan(READ_WAIT_MS / 4);
    expect(read).toMatchObject({
      status: 409,
      body: { error: 'PROJECTION_LANE_HELD', projectionId: pid, stateKey: 'k', minPosition: later.body.position, held: hold },
    });
    // Before the hold, the read answers the state as ever.
    const before = await c.get(`/projections/${pid}/state/k?minPosition=${good.body.position}`);
    expect(before).toMatchObject({ status: 200, body: { state: { n: 1 } } });
  });

  it('GET /reducers and GET /aggregate-types list what exists, a page at a time', async () => {
    const c = await newTenant(svc.url, `errors-lists-${backend}`);
    expect(await c.get('/reducers')).toMatchObject({ status: 200, body: { reducers: [] } });
    expect(await c.get('/aggregate-types')).toMatchObject({ status: 200, body: { aggregateTypes: [] } });
    await uploadReducer(svc.url, c, 'wallet-a');
    await uploadReducer(svc.url, c, 'wallet-b');

    const reducers = await c.get('/reducers');
    expect(reducers.status).toBe(200);
    expect(reducers.body.reducers.map((r: { reducerId: string }) => r.reducerId)).toEqual(['wallet-a', 'wallet-b']);
    expect(reducers.body.reducers[0]).toMatchObject({
      id: 'wallet-a',
      status: 'compiled',
      kind: 'reducer',
      discovered: [{ className: 'Bank.WalletReducer', aggregateType: 'wallet' }],
    });
    expect(reducers.body.next).toBeUndefined();
    const first = await c.get('/reducers?limit=1');
    expect(first.body).toMatchObject({ reducers: [{ reducerId: 'wallet-a' }], next: 'wallet-a' });
    expect((await c.get(`/reducers?limit=1&after=${first.body.next}`)).body.reducers).toMatchObject([{ reducerId: 'wallet-b' }]);

    const types = await c.get('/aggregate-types');
    expect(types).toMatchObject({
      status: 200,
      body: {
        aggregateTypes: [{ aggregateType: 'wallet', reducerId: 'wallet-b', className: 'Bank.WalletReducer', boundAt: expect.any(String) }],
      },
    });
    // Another tenant's uploads and bindings are not listed.
    const other = await newTenant(svc.url, `errors-lists-other-${backend}`);
    expect((await other.get('/reducers')).body.reducers).toEqual([]);
    expect((await other.get('/aggregate-types')).body.aggregateTypes).toEqual([]);
  });
});
