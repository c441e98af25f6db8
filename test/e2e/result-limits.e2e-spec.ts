import { RuntimePool } from '../../src/tenant-code/runtime-pool';
import { Client, newTenant, startService } from '../support/service-harness';
import { zipSources } from '../support/zip-writer';
import { fixtureSources } from '../support/tenant-code';
import { until } from '../support/wait';

jest.setTimeout(180_000);

/** Each event sets the state to a string of data.mb MiB. */
const BIG_REDUCER = fixtureSources('big-state', ['BigReducer.cs'])[0].content;

/** Keyed by aggregate id, except Huge events (a key of data.mb MiB); Grow events make the state data.kb KiB. */
const KEYS_PROJECTION = `
using EventSourcing;
namespace Keys
{
    public sealed class Tally { public int N { get; set; } public string Blob { get; set; } = ""; }
    [ProjectionName("keys")]
    public sealed class KeysProjection : IProjection<Tally>
    {
        public string? ResolveKey(Event e) =>
            e.EventType == "Huge" ? new string('k', e.Data.GetProperty("mb").GetInt32() * 1024 * 1024) : e.AggregateId;
        public Tally Apply(Tally s, Event e)
        {
            s.N++;
            if (e.EventType == "Grow") s.Blob = new string('x', e.Data.GetProperty("kb").GetInt32() * 1024);
            return s;
        }
    }
}`;

async function upload(c: Client, url: string, kind: 'reducers' | 'projections', source: string, reducerId?: string) {
  const form = new FormData();
  form.append('file', new Blob([zipSources([{ path: 'Source.cs', content: source }])]), 'src.zip');
  if (reducerId) form.append('reducerId', reducerId);
  const res = await fetch(`${url}/${kind}/upload`, { method: 'POST', headers: { 'x-api-key': c.key }, body: form });
  return (await res.json()) as any;
}

/** Runs `fn` and gives the longest text JSON.parse was handed meanwhile, anywhere in this process. */
async function longestParsed<T>(fn: () => Promise<T>): Promise<{ result: T; longest: number }> {
  const original = JSON.parse;
  let longest = 0;
  const spy = jest.spyOn(JSON, 'parse').mockImplementation((text: string, reviver?: any) => {
    if (typeof text === 'string') longest = Math.max(longest, text.length);
    return original(text, reviver);
  });
  try {
    return { result: await fn(), longest };
  } finally {
    spy.mockRestore();
  }
}

describe('limits on results, with the real C# runtime', () => {
  let svc: Awaited<ReturnType<typeof startService>>;
  let t: Client;

  beforeAll(async () => {
    svc = await startService({ LANE_RETRY_BACKOFF_MS: '20,20', LANE_SWEEP_MS: '200' });
    t = await newTenant(svc.url, 'results');
  }, 120_000);
  afterAll(() => svc?.close());

  it('refuses a 40 MB reducer state in the host: the append is refused with STATE_TOO_LARGE, nothing stored, the aggregate goes on', async () => {
    await upload(t, svc.url, 'reducers', BIG_REDUCER, 'big');
    await until(
      () => t.get('/reducers/big/status'),
      (r) => r.body.status === 'compiled',
    );
    const first = await t.post('/events', { aggregateId: 'big-1', eventType: 'Grow', data: { mb: 0 } });
    expect(first.body.state).toEqual({ blob: '', count: 1 });
    const pool = svc.app.get(RuntimePool);
    const pid = await pool.executorPid(t.tenantId);
    expect(pid).toEqual(expect.any(Number));

    const { result: big, longest } = await longestParsed(() =>
      t.post('/events', { aggregateId: 'big-1', eventType: 'Grow', data: { mb: 40 } }),
    );
    // README "Reducers guard invariants": a state the event would take over the cap is refused like a throw.
    expect(big.status).toBe(422);
    expect(big.body).toMatchObject({
      error: 'STATE_TOO_LARGE',
      message: expect.stringContaining('nothing was stored'),
      reducerError: expect.stringMatching(
        /^STATE_TOO_LARGE: the state after this event is at least 41,9\d\d,\d\d\d bytes of JSON; the limit is 1,048,576 bytes$/,
      ),
      eventType: 'Grow',
      version: 2,
    });
    // Nothing near 40 MB crossed the service's event loop: the host stopped before writing it.
    expect(longest).toBeLessThan(64 * 1024);
    // And the executor that refused it is the same process: nothing crashed or was killed.
    expect(await pool.executorPid(t.tenantId)).toBe(pid);

    const read = await t.get('/aggregate-types/big/big-1/state');
    expect(read).toMatchObject({ status: 200, body: { version: 1, state: { blob: '', count: 1 } } });

    // Not held: a later (small) event is stored and folded from the state before the refused one.
    const later = await t.post('/events', { aggregateId: 'big-1', eventType: 'Grow', data: { mb: 0 } });
    expect(later).toMatchObject({ status: 201, body: { version: 2, state: { blob: '', count: 2 } } });
    const events = await t.get('/events/big-1');
    expect(events.body.events.map((e: any) => e.version)).toEqual([1, 2]);

    // Other aggregates of the type are not affected.
    const other = await t.post('/events', { aggregateId: 'big-2', eventType: 'Grow', data: { mb: 0 } });
    expect(other.body.state).toEqual({ blob: '', count: 1 });
  });

  it('holds a projection lane whose state grows over the limit after its retries, and only that lane', async () => {
    const t2 = await newTenant(svc.url, 'projection-state');
    const up = await upload(t2, svc.url, 'projections', KEYS_PROJECTION);
    const st = await until(
      () => t2.get(`/projections/${up.uploadId}/status`),
      (r) => Boolean(r.body.projectionId) && r.body.status === 'compiled',
    );
    const id = st.body.projectionId;
    for (let i = 0; i < 3; i++)
      expect((await t2.post('/events', { aggregateId: `p-${i}`, eventType: 'Noted', data: {} })).status).toBe(201);
    expect((await t2.post('/events', { aggregateId: 'p-1', eventType: 'Grow', data: { kb: 2048 } })).status).toBe(201);
    const after = await t2.post('/events', { aggregateId: 'p-2', eventType: 'Noted', data: {} });
    const held = await until(
      () => t2.get(`/projections/${id}/lanes?held=true`),
      (r) => r.body.lanes?.length === 1,
    );
    expect(held.body.lanes[0]).toMatchObject({
      key: 'p-1',
      held: { attempts: 3, error: expect.stringMatching(/^STATE_TOO_LARGE: .*limit is 1,048,576 bytes/) },
    });
    const p2 = await t2.get(`/projections/${id}/state/p-2?minPosition=${after.body.position}`);
    expect(p2.body.state).toEqual({ n: 2, blob: '' });
    expect((await t2.get(`/projections/${id}/state/p-1`)).body.state).toEqual({ n: 1, blob: '' });
    expect((await t2.get(`/projections/${id}/state/p-0`)).body.state).toEqual({ n: 1, blob: '' });
  });

  it('applies a lane run of states under the cap that together pass the response budget in several runs, none held', async () => {
    const t4 = await newTenant(svc.url, 'many-big-states');
    const up = await upload(t4, svc.url, 'projections', KEYS_PROJECTION);
    const st = await until(
      () => t4.get(`/projections/${up.uploadId}/status`),
      (r) => Boolean(r.body.projectionId) && r.body.status === 'compiled',
    );
    const id = st.body.projectionId;
    // 80 states of 0.9 MiB in one lane run would be a 72 MiB response: over the 64 MiB a host may
    // write on a line (the executor would be killed and the lane held) and 72 MiB for the event loop.
    const { result: appended, longest } = await longestParsed(async () => {
      const r = await t4.post('/events/batch', {
        aggregateId: 'g-1',
        events: Array.from({ length: 80 }, () => ({ eventType: 'Grow', data: { kb: 900 } })),
      });
      expect(r.status).toBe(201);
      await until(
        () => t4.get(`/projections/${id}/lanes`),
        (l) => l.body.lanes?.some((x: any) => x.key === 'g-1' && x.appliedPosition === r.body.endPosition),
      );
      return r;
    });
    expect(longest).toBeLessThan(9 * 1024 * 1024);
    expect((await t4.get(`/projections/${id}/lanes?held=true`)).body.lanes).toEqual([]);
    const state = await t4.get(`/projections/${id}/state/g-1?minPosition=${appended.body.endPosition}`);
    expect(state.body.state.n).toBe(80);
    const last = await t4.get(`/projections/${id}/notifications?afterSequence=79&limit=5`);
    expect(last.body.notifications.map((n: any) => n.sequence)).toEqual([80]);
  });

  it('refuses eight 10 MB keys in the host: the executor survives, the batch routes, only the eight are held in !unresolved', async () => {
    const t3 = await newTenant(svc.url, 'keys');
    // One resolve batch: everything is in the log before the projection is deployed.
    for (let i = 0; i < 20; i++) {
      expect((await t3.post('/events', { aggregateId: `n-${i}`, eventType: 'Noted', data: {} })).status).toBe(201);
      if (i % 2 === 1 && i < 17)
        expect((await t3.post('/events', { aggregateId: `h-${i}`, eventType: 'Huge', data: { mb: 10 } })).status).toBe(201);
    }
    const { result: id, longest } = await longestParsed(async () => {
      const up = await upload(t3, svc.url, 'projections', KEYS_PROJECTION);
      const st = await until(
        () => t3.get(`/projections/${up.uploadId}/status`),
        (r) => Boolean(r.body.projectionId) && r.body.status === 'compiled',
      );
      const projectionId = st.body.projectionId as string;
      await until(
        () => t3.get(`/projections/${projectionId}/state/n-19`),
        (r) => r.status === 200,
      );
      return projectionId;
    });
    expect(longest).toBeLessThan(1024 * 1024);
    for (let i = 0; i < 20; i++) expect((await t3.get(`/projections/${id}/state/n-${i}`)).body.state).toEqual({ n: 1, blob: '' });
    const held = await t3.get(`/projections/${id}/lanes?held=true`);
    expect(held.body.lanes).toEqual([
      expect.objectContaining({
        key: '!unresolved',
        held: expect.objectContaining({ error: 'KEY_TOO_LONG: ResolveKey returned a key of 10,485,760 characters; the limit is 1,024' }),
      }),
    ]);
    const lag = await t3.get(`/projections/${id}/status?include=lag`);
    expect(lag.body.activeVersion.applyLag).toMatchObject({ heldLanes: 1, totalInboxDepth: 8 });
    // The batch's resolveKeys call was answered (a killed executor would have put all 28 events in
    // !unresolved with a PROTOCOL error after three attempts), and the executor is still there.
    expect(await svc.app.get(RuntimePool).executorPid(t3.tenantId)).toEqual(expect.any(Number));
  });
});
