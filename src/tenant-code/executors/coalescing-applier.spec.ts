import { CoalescingApplier } from './coalescing-applier';
import { HostCallError } from '../host/host-process';
import { ApplyGroupPayload, ApplyGroupResult } from '../host/runtime-protocol';

interface Call {
  tenantId: string;
  groups: ApplyGroupPayload[];
  settle: (r: ApplyGroupResult[] | Error) => void;
}

/** A runtime whose calls the test answers by hand. */
function fakeRuntime() {
  const calls: Call[] = [];
  const runtime = {
    apply: (tenantId: string, _assemblyId: string, _className: string, groups: ApplyGroupPayload[]) =>
      new Promise<ApplyGroupResult[]>((resolve, reject) =>
        calls.push({ tenantId, groups, settle: (r) => (r instanceof Error ? reject(r) : resolve(r)) }),
      ),
  };
  return { calls, runtime: runtime as any };
}

const group = (n: number): ApplyGroupPayload => ({ state: null, events: [{ version: n } as any] });
const ok = (c: Call): ApplyGroupResult[] => c.groups.map((g) => ({ ok: true, states: [String((g.events[0] as any).version)] }));
const turn = () => new Promise((r) => setImmediate(r));

describe('CoalescingApplier', () => {
  it('folds asked for in one tick go as one call', async () => {
    const { calls, runtime } = fakeRuntime();
    const a = new CoalescingApplier(runtime);
    const p = [1, 2, 3].map((n) => a.apply('t', 'asm', 'C', group(n)));
    await turn();
    expect(calls).toHaveLength(1);
    expect(calls[0].groups).toHaveLength(3);
    calls[0].settle(ok(calls[0]));
    expect((await Promise.all(p)).map((r) => r.states[0])).toEqual(['1', '2', '3']);
  });

  it('with callsInFlight, folds asked for while a call is out wait for it and go together', async () => {
    const { calls, runtime } = fakeRuntime();
    const a = new CoalescingApplier(runtime, { callsInFlight: 1 });
    const first = a.apply('t', 'asm', 'C', group(1));
    await turn();
    const later = [2, 3, 4].map((n) => a.apply('t', 'asm', 'C', group(n)));
    await turn();
    await turn();
    expect(calls).toHaveLength(1); // held: the first call is still out
    calls[0].settle(ok(calls[0]));
    await first;
    await turn();
    expect(calls).toHaveLength(2);
    expect(calls[1].groups.map((g) => (g.events[0] as any).version)).toEqual([2, 3, 4]);
    calls[1].settle(ok(calls[1]));
    expect((await Promise.all(later)).map((r) => r.states[0])).toEqual(['2', '3', '4']);
  });

  it('another tenant is not held by a tenant whose call is out', async () => {
    const { calls, runtime } = fakeRuntime();
    const a = new CoalescingApplier(runtime, { callsInFlight: 1 });
    void a.apply('t1', 'asm', 'C', group(1));
    await turn();
    const other = a.apply('t2', 'asm', 'C', group(2));
    await turn();
    expect(calls.map((c) => c.tenantId)).toEqual(['t1', 't2']);
    calls[1].settle(ok(calls[1]));
    expect((await other).states).toEqual(['2']);
  });

  it('a call carries at most maxGroupsPerCall folds', async () => {
    const { calls, runtime } = fakeRuntime();
    const a = new CoalescingApplier(runtime, { callsInFlight: 2, maxGroupsPerCall: 2 });
    const p = [1, 2, 3, 4, 5].map((n) => a.apply('t', 'asm', 'C', group(n)));
    await turn();
    expect(calls.map((c) => c.groups.length)).toEqual([2, 2]);
    calls[0].settle(ok(calls[0]));
    await turn();
    await turn();
    expect(calls.map((c) => c.groups.length)).toEqual([2, 2, 1]);
    calls[1].settle(ok(calls[1]));
    calls[2].settle(ok(calls[2]));
    expect((await Promise.all(p)).map((r) => r.states[0])).toEqual(['1', '2', '3', '4', '5']);
  });

  it('a call that dies of its own groups is retried one group at a time, so each caller sees its own answer', async () => {
    const { calls, runtime } = fakeRuntime();
    const a = new CoalescingApplier(runtime, { callsInFlight: 1 });
    const p = [1, 2].map((n) =>
      a.apply('t', 'asm', 'C', group(n)).then(
        (r) => r,
        (e: Error) => e,
      ),
    );
    await turn();
    calls[0].settle(new HostCallError('TIMEOUT', 'deadline'));
    await turn();
    expect(calls[1].groups).toHaveLength(1);
    calls[1].settle(new HostCallError('TIMEOUT', 'deadline'));
    await turn();
    calls[2].settle(ok(calls[2]));
    const [one, two] = await Promise.all(p);
    expect(one).toBeInstanceOf(HostCallError);
    expect((two as ApplyGroupResult).states).toEqual(['2']);
  });
});
