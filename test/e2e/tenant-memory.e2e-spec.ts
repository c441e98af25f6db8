import { RuntimePool } from '../../src/tenant-code/runtime-pool';
import { exampleSources } from '../support/runtime-harness';
import { Client, newTenant, RunningService, startService } from '../support/service-harness';
import { deployReducer } from '../support/tenant-code';
import { elapse } from '../support/wait';

/**
 * Issue 22, finding 2: a tenant whose static constructor builds the largest strings that still fit
 * held ~250 MiB of a shared executor's 256 MiB heap; its neighbours' appends then took 7–30 s and the
 * executor died during a neighbour's call, which was blamed and quarantined. Now type initialisers
 * run when the assembly is loaded and are charged to its tenant (RUNTIME_TENANT_MEMORY_MB, 32 MiB
 * by default): the attacker's load is refused, its memory given back before any neighbour's call
 * runs, and the attacker — not a neighbour — is quarantined. SQLite over real HTTP, one shared
 * executor (RUNTIME_EXEC_HOSTS=1) so that attacker and victims are certainly placed together.
 */
jest.setTimeout(180_000);

/** The finding's attacker: two static strings, each the largest of 120 MiB, 112 MiB, … that can still be allocated. */
const HOG = `
using System;
using EventSourcing;
namespace Hog
{
    public sealed class HogState { public long N { get; set; } }
    [AggregateType("hog")]
    public sealed class HogReducer : IReducer<HogState>
    {
        static readonly string A = Largest();
        static readonly string B = Largest();
        static string Largest()
        {
            for (var mib = 120; mib > 0; mib -= 8)
            {
                try { return new string('x', mib * 512 * 1024); }
                catch (OutOfMemoryException) { }
            }
            return "";
        }
        public HogState Apply(HogState state, Event e) { state.N += A.Length + B.Length; return state; }
    }
}`;

/** Victims appending in closed loops (two each) until `done()`: each answer's latency, and every answer not a 201 with the state. */
async function appendUntil(tenants: Client[], done: () => boolean): Promise<{ ms: number[]; bad: unknown[] }> {
  const ms: number[] = [];
  const bad: unknown[] = [];
  await Promise.all(
    tenants.flatMap((t, i) =>
      [0, 1].map(async (k) => {
        while (!done()) {
          const started = performance.now();
          const r = await t.post('/events', { aggregateId: `account-${i}-${k}`, eventType: 'MoneyDeposited', data: { amount: 1 } });
          ms.push(performance.now() - started);
          if (!(r.status === 201 && r.body.state && !r.body.stateError)) bad.push({ status: r.status, body: r.body });
        }
      }),
    ),
  );
  return { ms, bad };
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

describe('a tenant whose statics would fill a shared executor’s heap, over HTTP', () => {
  let svc: RunningService & { app: any };
  let pool: RuntimePool;
  let victims: Client[];
  let attacker: Client;

  beforeAll(async () => {
    svc = await startService({ RUNTIME_EXEC_HOSTS: '1', RUNTIME_QUARANTINE_MS: '120000' });
    pool = svc.app.get(RuntimePool);
    victims = [];
    for (let i = 0; i < 4; i++) victims.push(await newTenant(svc.url, `victim-${i}`));
    attacker = await newTenant(svc.url, 'attacker');
    for (const v of victims) await deployReducer(svc.url, v.key, 'bank', exampleSources('bank-account'));
    await deployReducer(svc.url, attacker.key, 'hog', [{ path: 'Hog.cs', content: HOG }]);
    for (const [i, v] of victims.entries()) {
      for (const k of [0, 1]) {
        const r = await v.post('/events', { aggregateId: `account-${i}-${k}`, eventType: 'AccountOpened', data: { owner: `o${i}` } });
        expect(r.body.state).toBeDefined();
      }
    }
  }, 180_000);
  afterAll(() => svc?.close());

  it('refuses and quarantines the attacker, and answers every victim normally', async () => {
    const shared = () => pool.stats().executors.find((e) => e.kind === 'shared')!;
    expect(shared().starts).toBe(1);
    // The victims' latency alone, on this machine now, for the bound below.
    let until = Date.now() + 2_000;
    const baseline = await appendUntil(victims, () => Date.now() > until);
    expect(baseline.bad).toEqual([]);

    // The attack: three appends of the attacker while the victims append.
    let attacking = true;
    const attack = (async () => {
      const answers = [];
      for (let n = 1; n <= 3; n++) {
        answers.push(await attacker.post('/events', { aggregateId: `hog-${n}`, eventType: 'Go', data: {} }));
        await elapse(300, 'the attacker paced: one append every 300 ms');
      }
      attacking = false;
      return answers;
    })();
    until = Infinity;
    const during = await appendUntil(victims, () => !attacking);
    const answers = await attack;

    // The attacker's appends are stored, each with the clear memory error of its own reducer.
    for (const a of answers) {
      expect(a.status).toBe(201);
      expect(a.body.stateError).toMatchObject({
        code: 'REDUCER_FAILED',
        failedVersion: 1,
        message: expect.stringContaining('TENANT_MEMORY_EXCEEDED'),
      });
      expect(a.body.stateError.message).toContain('the limit is 32 MiB per tenant');
    }
    // Every victim's append answered 201 with its state, within normal latency.
    expect(during.bad).toEqual([]);
    expect(during.ms.length).toBeGreaterThanOrEqual(8); // every victim loop answered during the attack
    const p99 = quantile(during.ms, 0.99);
    const base99 = quantile(baseline.ms, 0.99);
    // The bounds: the attacker's one load in the shared executor (~240 MiB allocated, refused, its context unloaded and
    // collected: 0.2–0.4 s on an idle machine, ~0.8 s on a busy one) holds the victims' calls queued behind it once; its
    // later appends are refused without a load. The finding's appends took 7.3 s and 30 s; a victim's call waiting for a
    // GC-thrashing or dying executor would run into its 5 s deadline.
    // Relative to the baseline too: on a machine loaded by other work every figure stretches alike.
    expect(Math.max(...during.ms)).toBeLessThan(Math.max(3_000, 4 * base99));
    expect(p99).toBeLessThan(Math.max(2_000, 4 * base99));

    // The attacker, and no victim, is quarantined; the shared executor never died, and holds none of the attacker's memory.
    expect(pool.placement(attacker.tenantId)).toMatchObject({ kind: 'quarantine' });
    for (const v of victims) expect(pool.placement(v.tenantId)).toMatchObject({ kind: 'shared', slot: 0 });
    expect(shared().starts).toBe(1);
    expect(pool.loadedAssemblies(victims[0].tenantId).some((id) => id.startsWith(attacker.tenantId))).toBe(false);
    const heap = (await pool.executorStats(victims[0].tenantId))!;
    expect(heap.gcHeapBytes).toBeLessThan(64 * 1024 * 1024);
    console.log(
      `victims: ${during.ms.length} appends during the attack, p50 ${quantile(during.ms, 0.5).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, ` +
        `max ${Math.max(...during.ms).toFixed(1)} ms (baseline p99 ${base99.toFixed(1)} ms); shared heap after ${heap.gcHeapBytes} bytes`,
    );
  });
});
