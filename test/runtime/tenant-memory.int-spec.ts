import * as fs from 'node:fs';
import * as path from 'node:path';
import { RuntimePool } from '../../src/tenant-code/runtime-pool';
import { ApplyGroupPayload } from '../../src/tenant-code/host/runtime-protocol';
import { realPool, REPO, wireEvent } from '../support/runtime-harness';

/**
 * Whose memory killed an executor, with real hosts (256 MiB heap): a call that runs out of memory
 * held by another tenant's statics is not that call's failure. The pool's cap is raised here
 * (160 MiB, past what the service's configuration allows: half the heap) so that one tenant can
 * hold enough of the heap for a neighbour's ordinary call to run out.
 */
jest.setTimeout(180_000);

const HOLDER = `
using EventSourcing;
namespace Holder
{
    public sealed class S { public long N { get; set; } }
    public sealed class HolderReducer : IReducer<S>
    {
        static readonly string A = new string('h', 70 * 1024 * 1024);
        public S Apply(S s, Event e) { s.N = A.Length; return s; }
    }
}`;

/** Needs 120 MiB for a moment: fits an executor with nobody's statics in it, not one holding 140 MiB of them. */
const BIG = `
using EventSourcing;
namespace Big
{
    public sealed class S { public long N { get; set; } }
    public sealed class BigReducer : IReducer<S>
    {
        public S Apply(S s, Event e) { s.N = new string('b', 60 * 1024 * 1024).Length; return s; }
    }
}`;

/** Needs 300 MiB for a moment: more than the whole heap, whoever holds what. */
const HUGE = `
using EventSourcing;
namespace Huge
{
    public sealed class S { public long N { get; set; } }
    public sealed class HugeReducer : IReducer<S>
    {
        public S Apply(S s, Event e) { s.N = new string('u', 150 * 1024 * 1024).Length; return s; }
    }
}`;

/**
 * A cap of 160 MiB, and the budget of what loaded uploads may be charged in all raised past the heap
 * (`execHeapBytes` only sizes that budget and the death rule here; the launcher's heap is 256 MiB):
 * else the budget unloads the holder at the next load, as the last test shows.
 */
const FORCED = { execHosts: 1, tenantMemoryBytes: 160 * 1024 * 1024, execHeapBytes: 1024 * 1024 * 1024, callDeadlineMs: 15_000 };

/** An ordinary tenant whose upload is charged a little more than the framer's (a 1 MiB table). */
const VICTIM = `
using EventSourcing;
namespace Victim
{
    public sealed class S { public long N { get; set; } }
    public sealed class VictimReducer : IReducer<S>
    {
        static readonly string Table = new string('v', 512 * 1024);
        public S Apply(S s, Event e) { s.N = Table.Length; return s; }
    }
}`;

const group = (): ApplyGroupPayload => ({ state: null, events: [wireEvent('x-1', 'Go', {})] });

let pool: RuntimePool;
let compiler: RuntimePool;
const images = new Map<string, Buffer>();

beforeAll(async () => {
  compiler = realPool().pool;
  for (const [id, src] of [
    ['holder', HOLDER],
    ['big', BIG],
    ['huge', HUGE],
    ['victim', VICTIM],
    ['framer', fs.readFileSync(path.join(REPO, 'runtime', 'escape-corpus', 'memory-oom-message-frame.cs'), 'utf8')],
  ]) {
    const r = await compiler.compile([{ path: `${id}.cs`, content: src }]);
    if (!r.ok) throw new Error(r.compilationError);
    images.set(id, Buffer.from(r.assembly, 'base64'));
  }
});
afterEach(() => pool?.close());
afterAll(() => compiler?.close());

describe('an executor out of memory that a tenant’s statics hold', () => {
  it('re-runs the call that ran out elsewhere and answers it, and quarantines the holder, not the caller', async () => {
    pool = realPool(FORCED, (_t, id) => images.get(id)).pool;
    const [held] = await pool.apply('holder', 'holder', 'Holder.HolderReducer', [group()]);
    expect(held).toMatchObject({ ok: true });
    const before = pool.stats().executors[0];
    expect(before.starts).toBe(1);

    const [r] = await pool.apply('caller', 'big', 'Big.BigReducer', [group()]);
    // Answered, as if nothing had happened: it ran again on the replacement process, without the holder.
    expect(r).toMatchObject({ ok: true });
    expect(JSON.parse(r.ok ? r.states[0] : '{}')).toEqual({ n: 60 * 1024 * 1024 });
    expect(pool.placement('holder')).toMatchObject({ kind: 'quarantine' });
    expect(pool.placement('caller')).toMatchObject({ kind: 'shared' });
    const after = pool.stats();
    expect(after.executors[0].starts).toBe(2);
    expect(after.offences).toBe(1);
    expect(after.reruns).toBeGreaterThanOrEqual(1);
  });

  it('fails the call, and blames its tenant, when the memory held is its own tenant’s', async () => {
    pool = realPool(FORCED, (_t, id) => images.get(id)).pool;
    expect(await pool.apply('self', 'holder', 'Holder.HolderReducer', [group()])).toMatchObject([{ ok: true }]);
    await expect(pool.apply('self', 'big', 'Big.BigReducer', [group()])).rejects.toMatchObject({ failure: 'HOST_MEMORY_EXHAUSTED' });
    expect(pool.placement('self')).toMatchObject({ kind: 'quarantine' });
    expect(pool.stats().offences).toBe(1);
    // Its uploads are unloaded from the shared executor: the memory goes back to the others.
    expect(pool.stats().executors.find((e) => e.kind === 'shared')!.loaded).toBe(0);
  });

  it('fails a call that alone needs more than the heap as its own error, as before, with no offence', async () => {
    pool = realPool({ execHosts: 1, callDeadlineMs: 15_000 }, (_t, id) => images.get(id)).pool;
    const [r] = await pool.apply('caller', 'huge', 'Huge.HugeReducer', [group()]);
    expect(r).toMatchObject({ ok: false, error: { code: 'APPLY_FAILED', exceptionType: 'System.OutOfMemoryException' } });
    expect(pool.stats().offences).toBe(0);
    expect(pool.placement('caller')).toMatchObject({ kind: 'shared' });
  });

  it('unloads a holder past half the heap at the next load, before the next call can run out', async () => {
    pool = realPool({ execHosts: 1, tenantMemoryBytes: 160 * 1024 * 1024, callDeadlineMs: 15_000 }, (_t, id) => images.get(id)).pool;
    expect(await pool.apply('holder', 'holder', 'Holder.HolderReducer', [group()])).toMatchObject([{ ok: true }]);
    const [r] = await pool.apply('caller', 'big', 'Big.BigReducer', [group()]);
    expect(r).toMatchObject({ ok: true });
    const shared = pool.stats().executors[0];
    expect(shared).toMatchObject({ starts: 1, loaded: 1, unloads: 1 });
    expect(pool.stats().offences).toBe(0);
  });

  it('does not take an OutOfMemoryException a tenant throws with a huge message for memory its neighbour holds', async () => {
    // Issue 22 red team (runtime/escape-corpus/memory-oom-message-frame.cs), with the service's own limits.
    pool = realPool({ execHosts: 1, callDeadlineMs: 15_000 }, (_t, id) => images.get(id)).pool;
    expect(await pool.apply('victim', 'victim', 'Victim.VictimReducer', [group()])).toMatchObject([{ ok: true }]);
    const [r] = await pool.apply('framer', 'framer', 'Escape.EscapeReducer', [group()]);
    // Its own failure, answered as such; nobody blamed, nobody replaced.
    expect(r).toMatchObject({ ok: false, error: { code: 'APPLY_FAILED', exceptionType: 'System.OutOfMemoryException' } });
    expect(pool.placement('victim')).toMatchObject({ kind: 'shared' });
    expect(pool.stats().offences).toBe(0);
    expect(pool.stats().executors[0].starts).toBe(1);
    expect(await pool.apply('victim', 'victim', 'Victim.VictimReducer', [group()])).toMatchObject([{ ok: true }]);
  });
});
