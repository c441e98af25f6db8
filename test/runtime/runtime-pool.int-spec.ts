import * as fs from 'node:fs';
import * as path from 'node:path';
import { RawJson } from '../../src/common/raw-json';
import { HostCallError } from '../../src/tenant-code/host/host-process';
import { RuntimePool } from '../../src/tenant-code/runtime-pool';
import { DEFAULT_POOL_OPTIONS } from '../../src/tenant-code/runtime-pool-options';
import { dotnetProcessUnder, uidOf } from '../support/host-processes';
import { exampleSources, realPool, REPO, wireEvent } from '../support/runtime-harness';

jest.setTimeout(120_000);

let pool: RuntimePool;
let assemblies: Map<string, Buffer>;
let fences: Record<string, boolean>;

beforeAll(() => {
  const r = realPool({ callDeadlineMs: 3000 });
  pool = r.pool;
  assemblies = r.assemblies;
  fences = r.launcher.staticFences;
});
afterAll(() => pool?.close());

async function compileInto(tenantId: string, assemblyId: string, files: { path: string; content: string }[]) {
  const r = await pool.compile(files);
  if (!r.ok) throw new Error(r.compilationError);
  assemblies.set(`${tenantId}/${assemblyId}`, Buffer.from(r.assembly, 'base64'));
  return r;
}

const single = (name: string, body: string) => [{ path: name, content: `using System; using EventSourcing;\n${body}` }];

describe('the runtime bridge over the real .NET host', () => {
  it('compiles the examples and discovers their implementations', async () => {
    const bank = await pool.compile(exampleSources('bank-account'));
    expect(bank.ok && bank.discovered).toEqual([
      expect.objectContaining({
        className: 'BankAccount.AccountReducer',
        stateTypeName: expect.stringContaining('AccountState'),
        kind: 'reducer',
        aggregateType: 'account',
      }),
    ]);
    const orders = await pool.compile(exampleSources('orders'));
    expect(orders.ok && orders.discovered.map((d) => [d.kind, d.aggregateType])).toEqual([['reducer', 'order']]);
    const totals = await pool.compile(exampleSources('customer-totals'));
    expect(totals.ok && totals.discovered.map((d) => d.kind)).toEqual(['projection']);
  });

  it('reports a syntax error as readable text with file, line and column', async () => {
    const r = await pool.compile(single('Broken.cs', 'public class X { void F() { int a = ; } }'));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.compilationError).toMatch(/Broken\.cs\(2,\d+\): error CS\d{4}/);
  });

  it('refuses a forbidden API by name', async () => {
    const r = await pool.compile(
      single(
        'Evil.cs',
        'public class S {} public class EvilReducer : IReducer<S> { public S Apply(S s, Event e) { System.IO.File.ReadAllText("/etc/passwd"); return s; } }',
      ),
    );
    expect(!r.ok && r.compilationError).toContain('System.IO.File.ReadAllText');
  });

  it('applies events in a tenant’s own executor and returns every intermediate state', async () => {
    await compileInto('tenant-a', 'bank-1', exampleSources('bank-account'));
    const events = [
      wireEvent('account-1', 'AccountOpened', { owner: 'ada' }),
      wireEvent('account-1', 'MoneyDeposited', { amount: 100 }),
      wireEvent('account-1', 'MoneyWithdrawn', { amount: 30 }),
    ];
    const [r] = await pool.apply('tenant-a', 'bank-1', 'BankAccount.AccountReducer', [{ state: null, events }]);
    expect(r.ok).toBe(true);
    expect(r.states.map((s) => JSON.parse(s).balance)).toEqual([0, 100, 70]);
    expect(JSON.parse(r.states[2])).toMatchObject({ owner: 'ada', transactions: 2 });
  });

  it('reports the failing event of a reducer that throws', async () => {
    const [r] = await pool.apply('tenant-a', 'bank-1', 'BankAccount.AccountReducer', [
      {
        state: new RawJson('{"owner":"ada","balance":10,"transactions":1}'),
        events: [wireEvent('account-1', 'MoneyWithdrawn', { amount: 500 })],
      },
    ]);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.failedIndex).toBe(0);
    expect(!r.ok && r.error.code).toBe('APPLY_FAILED');
  });

  it('runs every tenant on the fixed pool of shared executors (RUNTIME_ISOLATION=shared, the default)', async () => {
    await compileInto('tenant-b', 'bank-1', exampleSources('bank-account'));
    await pool.apply('tenant-b', 'bank-1', 'BankAccount.AccountReducer', [
      { state: null, events: [wireEvent('account-2', 'AccountOpened', { owner: 'bo' })] },
    ]);
    const executors = pool.stats().executors;
    expect(executors.map((e) => e.kind)).toEqual(new Array(DEFAULT_POOL_OPTIONS.execHosts).fill('shared'));
    const pids = executors.map((e) => e.pid);
    expect(pids).toContain(await pool.executorPid('tenant-a'));
    expect(pids).toContain(await pool.executorPid('tenant-b'));
  });

  it('survives a killed executor: a call it had not begun runs on the replacement, which loads again', async () => {
    const pid = (await pool.executorPid('tenant-a'))!;
    const starts = pool.stats().executors.reduce((n, e) => n + e.starts, 0);
    // Killed before it reads the call (the call goes out on the next microtask): nobody is blamed, the call runs again.
    // The host itself is killed, not bwrap above it: bwrap's death reaches the host only through a signal
    // that a loaded machine may deliver after the host has already answered.
    const host = dotnetProcessUnder(pid)!;
    const call = pool.apply('tenant-a', 'bank-1', 'BankAccount.AccountReducer', [
      { state: null, events: [wireEvent('account-3', 'AccountOpened', { owner: 'cy' })] },
    ]);
    process.kill(host, 'SIGKILL');
    const [r] = await call;
    expect(r.ok && JSON.parse(r.states[0]).owner).toBe('cy');
    expect(await pool.executorPid('tenant-a')).not.toBe(pid);
    expect(pool.placement('tenant-a')).toMatchObject({ kind: 'shared' });
    expect(pool.stats()).toMatchObject({ offences: 0 });
    expect(pool.stats().executors.reduce((n, e) => n + e.starts, 0)).toBe(starts + 1);
  });

  it('runs the executor sandboxed: own namespaces, no network, under rlimits, with nothing of the service’s environment', async () => {
    // On this project's machines every fence is available; the README documents what happens where not.
    expect(fences).toEqual({ namespaces: true, network: true, unprivilegedUser: true, rlimits: true });
    // Node holds bwrap's pid; the host is the dotnet process below it.
    const pid = dotnetProcessUnder((await pool.executorPid('tenant-a'))!)!;
    expect(pid).toBeDefined();
    const limits = fs.readFileSync(`/proc/${pid}/limits`, 'utf8');
    expect(limits).toMatch(/Max data size\s+2147483648/);
    expect(limits).toMatch(/Max core file size\s+0/);
    for (const ns of ['net', 'mnt', 'pid', 'ipc', 'uts'])
      expect(fs.readlinkSync(`/proc/${pid}/ns/${ns}`)).not.toBe(fs.readlinkSync(`/proc/self/ns/${ns}`));
    const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
    expect(env).not.toContain('DATABASE_URL');
    expect(env).toContain('DOTNET_GCHeapHardLimit=0x10000000');
    expect(env).toContain('EVENTSOURCING_SANDBOX=required');
    if (process.getuid!() === 0) expect(uidOf(pid)).toBe(61000);
    expect(fs.readFileSync(`/proc/${pid}/status`, 'utf8')).toMatch(/^Seccomp:\s+2$/m);
  });

  describe('escape corpus (runtime/escape-corpus)', () => {
    const dir = path.join(REPO, 'runtime', 'escape-corpus');
    const corpus = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.cs'))
      .map((f) => {
        const content = fs.readFileSync(path.join(dir, f), 'utf8');
        const m = /^\/\/ expect: (compile-error|runtime-contained|runtime-isolated) ?(.*)$/m.exec(content);
        return { file: f, content, kind: m?.[1], substring: m?.[2]?.trim() };
      });

    it('has an expectation for every file', () => {
      expect(corpus.length).toBeGreaterThan(40);
      expect(corpus.filter((c) => !c.kind).map((c) => c.file)).toEqual([]);
    });

    const compileErrors = corpus.filter((c) => c.kind === 'compile-error');
    it.each(compileErrors.map((c) => [c.file, c] as const))('%s is refused at compile time', async (_f, c) => {
      const r = await pool.compile([{ path: c.file, content: c.content }]);
      expect(r.ok).toBe(false);
      expect(!r.ok && r.compilationError).toContain(c.substring);
    });

    const contained = corpus.filter((c) => c.kind === 'runtime-contained');
    it.each(contained.map((c) => [c.file, c] as const))('%s is contained at run time while others keep being served', async (f, c) => {
      const tenant = `hostile-${f}`;
      const r = await compileInto(tenant, 'evil', [{ path: c.file, content: c.content }]);
      const cls = r.discovered[0].className;
      const started = Date.now();
      // The service's own event loop must stay free while the hostile call runs.
      let maxLag = 0;
      let last = Date.now();
      const ticker = setInterval(() => {
        maxLag = Math.max(maxLag, Date.now() - last - 20);
        last = Date.now();
      }, 20);
      const outcome = await pool
        .apply(tenant, 'evil', cls, [{ state: null, events: [wireEvent('x-1', 'Anything', { n: 1 })] }])
        .then(
          (res) => (res[0].ok ? 'returned' : res[0].error.code),
          (e: HostCallError) => e.failure,
        )
        .finally(() => clearInterval(ticker));
      // A projection's keys are tenant code too (IResolveKeys hands the host its own list): contained the same way.
      if (r.discovered[0].kind === 'projection') {
        const resolved = await pool.resolveKeys(tenant, 'evil', cls, [wireEvent('x-2', 'Anything', { n: 1 })]).then(
          ([k]) => (k !== null && typeof k === 'object' && !Array.isArray(k) ? k.error.code : 'returned'),
          (e: HostCallError) => e.failure,
        );
        expect(['TIMEOUT', 'CRASHED', 'RESOLVE_FAILED']).toContain(resolved);
      }
      expect(maxLag).toBeLessThan(250);
      // Contained: the call failed (deadline, crash, a caught exception, a refused state, or — issue 28 — a refused load: a
      // static initializer that threw), within the deadline plus restart slack.
      expect(['TIMEOUT', 'CRASHED', 'APPLY_FAILED', 'STATE_SERIALIZATION_FAILED', 'LOAD_FAILED']).toContain(outcome);
      expect(Date.now() - started).toBeLessThan(15_000);
      // The well-behaved tenant is served meanwhile and after.
      const t0 = Date.now();
      const [ok] = await pool.apply('tenant-b', 'bank-1', 'BankAccount.AccountReducer', [
        { state: null, events: [wireEvent('account-5', 'AccountOpened', { owner: 'ok' })] },
      ]);
      expect(ok.ok).toBe(true);
      expect(Date.now() - t0).toBeLessThan(1000);
    });
  });
});

describe('compile queue over the real compiler', () => {
  it('finishes, after a restart, the compiles a previous run left pending', async () => {
    const { SqliteStore } = await import('../../src/store/sqlite/sqlite-store');
    const { CompileQueue } = await import('../../src/tenant-code/compiler/compile-queue');
    const { CompileWorker } = await import('../../src/compilation/compile-worker');
    const os = await import('node:os');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'es-cq-'));
    const file = path.join(dir, 'events.sqlite');
    // "Before the crash": the upload was accepted (202) and recorded as pending, nothing compiled it.
    const before = new SqliteStore({ file });
    await before.migrate();
    await before.uploads.create({
      uploadId: 'u-pending',
      tenantId: 't1',
      kind: 'reducer',
      sources: exampleSources('bank-account'),
      meta: {},
      createdAt: Date.now(),
    });
    await before.uploads.create({
      uploadId: 'u-broken',
      tenantId: 't1',
      kind: 'reducer',
      sources: single('Bad.cs', 'class {'),
      meta: {},
      createdAt: Date.now() + 1,
    });
    await before.close();
    // "After the restart": a new queue on the same store picks both up.
    const after = new SqliteStore({ file });
    await after.migrate();
    const queue = new CompileQueue(after.uploads);
    const nothing = async () => undefined;
    const worker = new CompileWorker(queue, pool, after.uploads, { autoBind: nothing }, { deploy: nothing });
    worker.start();
    await queue.idle();
    expect(await after.uploads.get('t1', 'u-pending')).toMatchObject({
      status: 'compiled',
      discovered: [expect.objectContaining({ aggregateType: 'account' })],
    });
    expect(await after.uploads.get('t1', 'u-broken')).toMatchObject({
      status: 'failed',
      compilationError: expect.stringMatching(/Bad\.cs\(\d+,\d+\): error CS/),
    });
    // Before the store: an open queue looks at the store again every few seconds while its compilers are free.
    await worker.close();
    await after.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('fails an archive without a reducer with a message that says so', async () => {
    const r = await pool.compile(single('Plain.cs', 'public class Nothing {}'), 'reducer');
    expect(r.ok).toBe(false);
    expect(!r.ok && r.compilationError).toMatch(/no implementation of IReducer/i);
  });
});
