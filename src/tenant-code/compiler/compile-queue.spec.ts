import { DomainError } from '../../common/domain-error';
import { SqliteStore } from '../../store/sqlite/sqlite-store';
import { CompileWorker } from '../../compilation/compile-worker';
import { Compiler } from '../compiler.port';
import { UploadRecord, UploadRepository } from '../../store/upload-repository.port';
import { HostCallError } from '../host/host-process';
import { CompileQueue, CompileQueueOptions } from './compile-queue';
import { CompileResult } from '../host/runtime-protocol';
import { elapse, until as untilMet } from '../../../test/support/wait';

const ok: CompileResult = {
  ok: true,
  discovered: [{ className: 'A.AccountReducer', stateTypeName: 'S', kind: 'reducer', aggregateType: 'account' }],
  assembly: Buffer.from('dll').toString('base64'),
  assemblySha256: 'sha',
  warnings: [],
  diagnostics: [],
};

type Answer = CompileResult | Error | Promise<CompileResult>;

/** Scripted compiler: the queue's bookkeeping is under test here; the real host is in test/runtime. */
class ScriptedCompiler implements Compiler {
  calls: string[] = [];
  running = new Map<string, number>();
  maxRunningPerTenant = 0;
  maxRunning = 0;
  constructor(private readonly answer: (path: string) => Answer = () => ok) {}
  async compile(files: { path: string; content: string }[]): Promise<CompileResult> {
    const path = files[0].path;
    const tenant = files[0].content;
    this.calls.push(path);
    this.running.set(tenant, (this.running.get(tenant) ?? 0) + 1);
    this.maxRunningPerTenant = Math.max(this.maxRunningPerTenant, this.running.get(tenant)!);
    this.maxRunning = Math.max(
      this.maxRunning,
      [...this.running.values()].reduce((a, b) => a + b, 0),
    );
    try {
      await new Promise((r) => setImmediate(r));
      const a = await this.answer(path);
      if (a instanceof Error) throw a;
      return a;
    } finally {
      this.running.set(tenant, this.running.get(tenant)! - 1);
    }
  }
}

function gate() {
  let open!: (r: CompileResult) => void;
  const promise = new Promise<CompileResult>((r) => (open = r));
  return { promise, open };
}

async function memoryStore() {
  const store = new SqliteStore({ file: ':memory:' });
  await store.migrate();
  return store;
}

/** An upload whose single file is named `path`; its content names the tenant (for the compiler's bookkeeping). */
const upload = (tenantId: string, path: string) => ({
  tenantId,
  kind: 'reducer' as const,
  sources: [{ path, content: tenantId }],
  uploadId: path,
});

/**
 * The queue with the worker that takes from it (compilation/compile-worker.ts), as the service runs
 * them; `handedOver` lists the compiled uploads the worker gave to their owner's catalog.
 */
function startCompiles(uploads: UploadRepository, compiler: Compiler, options: Partial<CompileQueueOptions> = {}) {
  const q = new CompileQueue(uploads, options);
  const handedOver: string[] = [];
  const owner = {
    autoBind: async (u: UploadRecord) => void handedOver.push(`${u.uploadId}:${u.status}`),
    deploy: async (u: UploadRecord) => void handedOver.push(`${u.uploadId}:${u.status}`),
  };
  new CompileWorker(q, compiler, uploads, owner, owner).start();
  return { q, handedOver };
}

async function setup(compiler: ScriptedCompiler, options: Partial<CompileQueueOptions> = {}) {
  const store = await memoryStore();
  const { q, handedOver } = startCompiles(store.uploads, compiler, { concurrency: 1, maxPendingPerTenant: 100, ...options });
  return { store, q, handedOver };
}

describe('CompileQueue', () => {
  it('answers at once with a pending record, then records the compile and tells listeners', async () => {
    const { store, q, handedOver: seen } = await setup(new ScriptedCompiler());
    const rec = await q.submit(upload('t', 'u1'));
    expect(rec.status).toBe('pending');
    await q.idle();
    expect(await store.uploads.get('t', 'u1')).toMatchObject({ status: 'compiled', discovered: ok.ok ? ok.discovered : [] });
    expect(await store.uploads.getAssembly('t', 'u1')).toEqual(Buffer.from('dll'));
    expect(seen).toEqual(['u1:compiled']);
  });

  it('records a compilation error as failed', async () => {
    const { store, q } = await setup(
      new ScriptedCompiler(() => ({ ok: false, compilationError: 'A.cs(1,1): error CS1002: ; expected', diagnostics: [], warnings: [] })),
    );
    await q.submit(upload('t', 'u1'));
    await q.idle();
    expect(await store.uploads.get('t', 'u1')).toMatchObject({ status: 'failed', compilationError: 'A.cs(1,1): error CS1002: ; expected' });
  });

  it('finishes what a previous run left pending', async () => {
    const store = await memoryStore();
    await store.uploads.create({
      uploadId: 'left',
      tenantId: 't',
      kind: 'reducer',
      sources: [{ path: 'L.cs', content: 't' }],
      meta: {},
      createdAt: 1,
    });
    const compiler = new ScriptedCompiler();
    const { q } = startCompiles(store.uploads, compiler);
    await q.idle();
    expect(compiler.calls).toEqual(['L.cs']);
    expect((await store.uploads.get('t', 'left'))?.status).toBe('compiled');
  });

  it('serves tenants in turn, not in upload order, also for what a previous run left pending', async () => {
    const store = await memoryStore();
    const pending: [string, string][] = [
      ['a', 'A1'],
      ['a', 'A2'],
      ['a', 'A3'],
      ['a', 'A4'],
      ['b', 'B1'],
      ['b', 'B2'],
      ['c', 'C1'],
    ];
    for (const [i, [t, id]] of pending.entries()) {
      await store.uploads.create({
        uploadId: id,
        tenantId: t,
        kind: 'reducer',
        sources: [{ path: id, content: t }],
        meta: {},
        createdAt: i + 1,
      });
    }
    const compiler = new ScriptedCompiler();
    const { q } = startCompiles(store.uploads, compiler, { concurrency: 1 });
    await q.idle();
    expect(compiler.calls).toEqual(['A1', 'B1', 'C1', 'A2', 'B2', 'A3', 'A4']);
  });

  it('gives a tenant that uploads later its turn before the next of a tenant with many waiting', async () => {
    const first = gate();
    const compiler = new ScriptedCompiler((p) => (p === 'A1' ? first.promise : ok));
    const { q } = await setup(compiler);
    for (const id of ['A1', 'A2', 'A3']) await q.submit(upload('a', id));
    await q.submit(upload('b', 'B1'));
    first.open(ok);
    await q.idle();
    expect(compiler.calls).toEqual(['A1', 'B1', 'A2', 'A3']);
  });

  it('runs at most one compile of a tenant at a time, and other tenants’ beside it', async () => {
    const compiler = new ScriptedCompiler();
    const { q } = await setup(compiler, { concurrency: 3 });
    await Promise.all([
      ...['A1', 'A2', 'A3', 'A4'].map((id) => q.submit(upload('a', id))),
      q.submit(upload('b', 'B1')),
      q.submit(upload('c', 'C1')),
    ]);
    await q.idle();
    expect(compiler.calls.sort()).toEqual(['A1', 'A2', 'A3', 'A4', 'B1', 'C1']);
    expect(compiler.maxRunningPerTenant).toBe(1);
    expect(compiler.maxRunning).toBeGreaterThan(1);
  });

  it('compiles another tenant’s upload while one compile hangs', async () => {
    const hang = gate();
    const compiler = new ScriptedCompiler((p) => (p === 'A1' ? hang.promise : ok));
    const { store, q } = await setup(compiler, { concurrency: 2 });
    await q.submit(upload('a', 'A1'));
    await q.submit(upload('a', 'A2'));
    await q.submit(upload('b', 'B1'));
    const deadline = Date.now() + 2000;
    await untilMet(
      async () => (await store.uploads.get('b', 'B1'))?.status,
      (s) => s === 'compiled',
      deadline - Date.now(),
      'B1 compiled',
    );
    expect((await store.uploads.get('b', 'B1'))?.status).toBe('compiled');
    // A's second upload waits for its first: a tenant holds one compiler at most.
    expect(compiler.calls).toEqual(['A1', 'B1']);
    hang.open(ok);
    await q.idle();
    expect(compiler.calls).toEqual(['A1', 'B1', 'A2']);
  });

  it('fails a compile that outlived the deadline at once, without a retry', async () => {
    const compiler = new ScriptedCompiler(() => new HostCallError('TIMEOUT', 'compiler: compile exceeded its 3000 ms deadline'));
    const { store, q } = await setup(compiler, { deadlineMs: 3000 });
    await q.submit(upload('t', 'Slow.cs'));
    await q.idle();
    expect(compiler.calls).toEqual(['Slow.cs']);
    const u = await store.uploads.get('t', 'Slow.cs');
    expect(u?.status).toBe('failed');
    expect(u?.compilationError).toMatch(/exceeded the 3000 ms deadline .*not retried/);
  });

  it('retries a compile that crashed the compiler once, on the tenant’s next turn, then fails it with a clear message', async () => {
    const compiler = new ScriptedCompiler((p) =>
      p === 'Crash.cs' ? new HostCallError('CRASHED', 'compiler: host exited (code null, signal SIGABRT)') : ok,
    );
    const { store, q } = await setup(compiler);
    await q.submit(upload('a', 'Crash.cs'));
    await q.submit(upload('b', 'B1'));
    await q.idle();
    expect(compiler.calls).toEqual(['Crash.cs', 'B1', 'Crash.cs']);
    const u = await store.uploads.get('a', 'Crash.cs');
    expect(u?.status).toBe('failed');
    expect(u?.compilationError).toMatch(/compiler failed on this archive 2 times .*SIGABRT.*not retried again/);
  });

  it('compiles a crash’s retry normally when it succeeds', async () => {
    let first = true;
    const compiler = new ScriptedCompiler(() => (first ? ((first = false), new HostCallError('INTERNAL', 'OutOfMemoryException')) : ok));
    const { store, q } = await setup(compiler);
    await q.submit(upload('t', 'u1'));
    await q.idle();
    expect(compiler.calls).toEqual(['u1', 'u1']);
    expect((await store.uploads.get('t', 'u1'))?.status).toBe('compiled');
  });

  it('keeps uploads pending while no compiler can be started, and compiles them once one can', async () => {
    let available = false;
    const compiler = new ScriptedCompiler(() => (available ? ok : new HostCallError('UNAVAILABLE', 'compiler: host failed to start')));
    const { store, q } = await setup(compiler, { unavailableRetryMs: 50 });
    await q.submit(upload('t', 'u1'));
    await elapse(120, 'a few unavailable-retry periods (50 ms): the upload stays pending, tried a few times');
    expect((await store.uploads.get('t', 'u1'))?.status).toBe('pending');
    const tries = compiler.calls.length;
    expect(tries).toBeGreaterThanOrEqual(2);
    expect(tries).toBeLessThanOrEqual(4); // paused between tries, not spinning
    available = true;
    await q.idle();
    expect((await store.uploads.get('t', 'u1'))?.status).toBe('compiled');
  });

  it('refuses an upload past the tenant’s pending cap, storing nothing, and accepts again once one compiled', async () => {
    const hang = gate();
    const compiler = new ScriptedCompiler((p) => (p === 'A1' ? hang.promise : ok));
    const { store, q } = await setup(compiler, { maxPendingPerTenant: 3, deadlineMs: 12_000 });
    for (const id of ['A1', 'A2', 'A3']) await q.submit(upload('a', id));
    const refused = await q.submit(upload('a', 'A4')).catch((e) => e);
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ code: 'TOO_MANY_PENDING_UPLOADS', details: { pending: 3, maxPending: 3, retryAfterSeconds: 12 } });
    await expect(q.checkRoom('a')).rejects.toMatchObject({ code: 'TOO_MANY_PENDING_UPLOADS' });
    expect(await store.uploads.get('a', 'A4')).toBeNull();
    expect(await store.uploads.countPending('a')).toBe(3);
    // Another tenant is not affected.
    await q.submit(upload('b', 'B1'));
    hang.open(ok);
    await q.idle();
    await q.submit(upload('a', 'A4'));
    await q.idle();
    expect((await store.uploads.get('a', 'A4'))?.status).toBe('compiled');
  });

  it('holds the cap against concurrent uploads of one tenant', async () => {
    const hang = gate();
    const { store, q } = await setup(new ScriptedCompiler(() => hang.promise), { maxPendingPerTenant: 3 });
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => q.submit(upload('a', `A${i}`))));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code)).toEqual(
      Array(5).fill('TOO_MANY_PENDING_UPLOADS'),
    );
    expect(await store.uploads.countPending('a')).toBe(3);
    hang.open(ok);
    await q.idle();
  });

  it('compiles each upload once when two instances on one store take uploads at once (a claim each)', async () => {
    const store = await memoryStore();
    const compiler = new ScriptedCompiler();
    // Two instances' queues and workers over one store (their compilers counted together).
    const a = startCompiles(store.uploads, compiler, { concurrency: 2, maxPendingPerTenant: 100 });
    const b = startCompiles(store.uploads, compiler, { concurrency: 2, maxPendingPerTenant: 100 });
    const ids = ['t1', 't2', 't3'].flatMap((t) => [`${t}-a`, `${t}-b`]);
    await Promise.all(ids.map((id, i) => (i % 2 ? a.q : b.q).submit(upload(id.slice(0, 2), id))));
    await until(async () => (await store.uploads.countPending()) === 0);
    await Promise.all([a.q.idle(), b.q.idle()]);
    expect([...compiler.calls].sort()).toEqual([...ids].sort());
    expect([...a.handedOver, ...b.handedOver].sort()).toEqual(ids.map((id) => `${id}:compiled`).sort());
  });

  it('takes over an upload whose claim lapsed (its instance died mid-compile), found by the sweep', async () => {
    const store = await memoryStore();
    await store.uploads.create({
      uploadId: 'orphan',
      tenantId: 't',
      kind: 'reducer',
      sources: [{ path: 'O.cs', content: 't' }],
      meta: {},
      createdAt: 1,
    });
    const claimedAt = Date.now();
    expect((await store.uploads.claimOldest('t', 'dead-instance', claimedAt, claimedAt + 400))?.uploadId).toBe('orphan');
    const compiler = new ScriptedCompiler();
    startCompiles(store.uploads, compiler, { sweepMs: 50 });
    await until(async () => (await store.uploads.get('t', 'orphan'))?.status === 'compiled');
    expect(Date.now()).toBeGreaterThanOrEqual(claimedAt + 400);
    expect(compiler.calls).toEqual(['O.cs']);
  });
});

describe('CompileWorker with a claim taken over', () => {
  it('records and hands over nothing when its compile outlived its claim and another instance took the upload', async () => {
    const hang = gate();
    const store = await memoryStore();
    const compiler = new ScriptedCompiler(() => hang.promise);
    const { q, handedOver } = startCompiles(store.uploads, compiler, { concurrency: 1 });
    await q.submit(upload('t', 'u1'));
    await until(async () => compiler.calls.length === 1);
    // Another instance, its clock past the claim, takes the upload over.
    const later = Date.now() + 10 * 60_000;
    expect((await store.uploads.claimOldest('t', 'other-instance', later, later + 60_000))?.uploadId).toBe('u1');
    hang.open(ok);
    await q.idle();
    expect(handedOver).toEqual([]);
    expect((await store.uploads.get('t', 'u1'))?.status).toBe('pending'); // the other instance records it
    expect(
      await store.uploads.markCompiled('t', 'u1', {
        discovered: [],
        assembly: Buffer.from('x'),
        assemblySha256: 's',
        at: 1,
        claim: 'other-instance',
      }),
    ).toBe(true);
  });
});

/** Waits for a condition (polled), failing after 5 s. */
async function until(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met within 5 s');
    await elapse(10, 'poll interval');
  }
}
