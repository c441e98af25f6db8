import { RuntimePool } from '../../src/tenant-code/runtime-pool';
import { exampleSources } from '../support/runtime-harness';
import { Client, newTenant, RunningService, startService } from '../support/service-harness';
import { envFor, STORE_BACKENDS, stopBackends } from '../support/store-backends';
import { zipSources } from '../support/zip-writer';
import { elapse } from '../support/wait';

/**
 * Many tenants on one shared executor over HTTP: a tenant whose reducer spins until its deadline,
 * while other tenants append, costs them nothing — no error, no failed state — and is moved to a
 * quarantine executor of its own, where its next call hangs only itself.
 */
jest.setTimeout(180_000);
afterAll(() => stopBackends(), 60_000);

const SPIN = `
using EventSourcing;
namespace Spin
{
    public sealed class SpinState { public long N { get; set; } }
    [AggregateType("spin")]
    public sealed class SpinReducer : IReducer<SpinState>
    {
        public SpinState Apply(SpinState state, Event e)
        {
            while (state.N >= 0) state.N++;
            return state;
        }
    }
}`;

async function upload(c: Client, url: string, files: { path: string; content: string }[], reducerId: string): Promise<void> {
  const form = new FormData();
  form.append('file', new Blob([zipSources(files)]), 'r.zip');
  form.append('reducerId', reducerId);
  const res = await fetch(`${url}/reducers/upload`, { method: 'POST', headers: { 'x-api-key': c.key }, body: form });
  if (res.status !== 202) throw new Error(`upload: ${res.status} ${await res.text()}`);
  for (;;) {
    const st = await c.get(`/reducers/${reducerId}/status`);
    if (st.body.status === 'compiled') return;
    if (st.body.status === 'failed') throw new Error(st.body.compilationError);
    await elapse(100, 'poll interval');
  }
}

/** Innocent tenants appending in closed loops for `ms`: every answer that is not a 201 with the state is collected. */
async function appendWhile(tenants: Client[], ms: number): Promise<{ ok: number; bad: unknown[] }> {
  const end = Date.now() + ms;
  const bad: unknown[] = [];
  let ok = 0;
  await Promise.all(
    tenants.flatMap((t, i) =>
      [0, 1].map(async (k) => {
        for (let n = 0; Date.now() < end; n++) {
          const r = await t.post('/events', { aggregateId: `account-${i}-${k}`, eventType: 'MoneyDeposited', data: { amount: 1 } });
          if (r.status === 201 && r.body.state && !r.body.stateError) ok++;
          else bad.push({ status: r.status, body: r.body });
        }
      }),
    ),
  );
  return { ok, bad };
}

describe('executors at service start', () => {
  it('starts every shared executor before it says it is ready, so a first append after a restart waits for no process', async () => {
    const svc = await startService({ RUNTIME_EXEC_HOSTS: '2' });
    try {
      const pool = svc.app.get(RuntimePool);
      let ready: Response | undefined;
      for (const end = Date.now() + 30_000; Date.now() < end; await elapse(50, 'poll interval')) {
        ready = await fetch(`${svc.url}/health/ready`);
        if (ready.status === 200) break;
        // Not ready yet: then an executor is still starting.
        expect(pool.executorsState.state).toBe('starting');
      }
      expect(ready!.status).toBe(200);
      expect(((await ready!.json()) as { runtime: unknown }).runtime).toEqual({ isolation: 'shared', executors: 'started', count: 2 });
      // Both processes run, each started once and warmed up: the built-in upload loaded, applied and
      // resolved once (the JIT's first-call cost paid before any tenant's call), then dropped.
      const shared = pool.stats().executors.filter((e) => e.kind === 'shared');
      expect(shared).toHaveLength(2);
      for (const e of shared) expect(e).toMatchObject({ pid: expect.any(Number), starts: 1, items: 2, loads: 1, loaded: 0 });
      // A first append now finds its executor running: no process starts for it.
      const t = await newTenant(svc.url, 'first');
      await upload(t, svc.url, exampleSources('bank-account'), 'bank');
      expect((await t.post('/events', { aggregateId: 'account-1', eventType: 'AccountOpened', data: { owner: 'o' } })).status).toBe(201);
      expect(
        pool
          .stats()
          .executors.filter((e) => e.kind === 'shared')
          .map((e) => e.starts),
      ).toEqual([1, 1]);
    } finally {
      await svc.close();
    }
  });
});

describe.each(STORE_BACKENDS)('a hostile tenant on a shared executor, over HTTP on %s', (backend) => {
  let svc: RunningService & { app: any };
  let innocents: Client[];
  let offender: Client;
  let pool: RuntimePool;

  beforeAll(async () => {
    svc = await startService({
      ...(await envFor(backend)),
      RUNTIME_EXEC_HOSTS: '1',
      RUNTIME_CALL_DEADLINE_MS: '1500',
      RUNTIME_QUARANTINE_MS: '120000',
    });
    pool = svc.app.get(RuntimePool);
    innocents = [];
    for (let i = 0; i < 4; i++) innocents.push(await newTenant(svc.url, `innocent-${i}`));
    offender = await newTenant(svc.url, 'offender');
    for (const t of innocents) await upload(t, svc.url, exampleSources('bank-account'), 'bank');
    await upload(offender, svc.url, [{ path: 'Spin.cs', content: SPIN }], 'spin');
    for (const [i, t] of innocents.entries()) {
      expect(
        (await t.post('/events', { aggregateId: `account-${i}-0`, eventType: 'AccountOpened', data: { owner: `o${i}` } })).body.state,
      ).toBeDefined();
    }
  }, 180_000);
  afterAll(() => svc?.close());

  it('answers the other tenants as if nothing happened, fails the offender’s own append, and quarantines it', async () => {
    const shared = () => pool.stats().executors.find((e) => e.kind === 'shared')!;
    expect(shared().starts).toBe(1);
    const offence = offender.post('/events', { aggregateId: 'spin-1', eventType: 'Go', data: {} });
    const first = await appendWhile(innocents, 4_000);
    const spun = await offence;
    // Its own append is stored, with today's answer for a reducer past its deadline.
    expect(spun.status).toBe(201);
    expect(spun.body.stateError).toMatchObject({ code: 'REDUCER_FAILED', failedVersion: 1, message: expect.stringContaining('TIMEOUT') });
    expect(first.bad).toEqual([]);
    expect(first.ok).toBeGreaterThan(20);
    expect(shared().starts).toBe(2);
    expect(pool.placement(offender.tenantId)).toMatchObject({ kind: 'quarantine' });

    // Its next append hangs its quarantine executor only: the shared one is not restarted again.
    const again = offender.post('/events', { aggregateId: 'spin-2', eventType: 'Go', data: {} });
    const second = await appendWhile(innocents, 3_000);
    expect((await again).body.stateError).toMatchObject({ code: 'REDUCER_FAILED', message: expect.stringContaining('TIMEOUT') });
    expect(second.bad).toEqual([]);
    expect(shared().starts).toBe(2);
    expect(pool.stats().executors.filter((e) => e.kind === 'quarantine')).toHaveLength(1);
    const offenderPid = await pool.executorPid(offender.tenantId);
    expect(offenderPid).not.toBe(shared().pid);
  });
});
