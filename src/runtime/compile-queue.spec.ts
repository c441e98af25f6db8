import { SqliteStore } from '../store/sqlite/sqlite-store';
import { HostCallError } from './host-process';
import { CompileQueue, Compiler } from './compile-queue';
import { CompileResult } from './runtime-protocol';

const ok: CompileResult = {
  ok: true,
  discovered: [{ className: 'A.AccountReducer', stateTypeName: 'S', kind: 'reducer', aggregateType: 'account' }],
  assembly: Buffer.from('dll').toString('base64'),
  assemblySha256: 'sha',
  warnings: [],
};

/** Scripted compiler: the queue's bookkeeping is under test here; the real host is in test/runtime. */
class ScriptedCompiler implements Compiler {
  calls: string[] = [];
  constructor(private readonly answer: (path: string) => CompileResult | Error) {}
  async compile(files: { path: string; content: string }[]): Promise<CompileResult> {
    this.calls.push(files[0].path);
    const a = this.answer(files[0].path);
    if (a instanceof Error) throw a;
    return a;
  }
}

async function memoryStore() {
  const store = new SqliteStore({ file: ':memory:' });
  await store.migrate();
  return store;
}

describe('CompileQueue', () => {
  it('answers at once with a pending record, then records the compile and tells listeners', async () => {
    const store = await memoryStore();
    const q = new CompileQueue(store.uploads, new ScriptedCompiler(() => ok));
    const seen: string[] = [];
    q.onCompiled((u) => void seen.push(`${u.uploadId}:${u.status}`));
    const rec = await q.submit({ tenantId: 't', kind: 'reducer', sources: [{ path: 'A.cs', content: '' }], uploadId: 'u1' });
    expect(rec.status).toBe('pending');
    await q.idle();
    expect(await store.uploads.get('t', 'u1')).toMatchObject({ status: 'compiled', discovered: ok.ok ? ok.discovered : [] });
    expect(await store.uploads.getAssembly('t', 'u1')).toEqual(Buffer.from('dll'));
    expect(seen).toEqual(['u1:compiled']);
  });

  it('records a compilation error as failed', async () => {
    const store = await memoryStore();
    const q = new CompileQueue(store.uploads, new ScriptedCompiler(() => ({ ok: false, compilationError: 'A.cs(1,1): error CS1002: ; expected', diagnostics: [], warnings: [] })));
    await q.submit({ tenantId: 't', kind: 'reducer', sources: [{ path: 'A.cs', content: '' }], uploadId: 'u1' });
    await q.idle();
    expect(await store.uploads.get('t', 'u1')).toMatchObject({ status: 'failed', compilationError: 'A.cs(1,1): error CS1002: ; expected' });
  });

  it('finishes what a previous run left pending', async () => {
    const store = await memoryStore();
    await store.uploads.create({ uploadId: 'left', tenantId: 't', kind: 'reducer', sources: [{ path: 'L.cs', content: '' }], meta: {}, createdAt: 1 });
    const compiler = new ScriptedCompiler(() => ok);
    const q = new CompileQueue(store.uploads, compiler);
    q.start();
    await q.idle();
    expect(compiler.calls).toEqual(['L.cs']);
    expect((await store.uploads.get('t', 'left'))?.status).toBe('compiled');
  });

  it('retries a compile that crashed the compiler, then fails it with a clear message', async () => {
    const store = await memoryStore();
    const compiler = new ScriptedCompiler(() => new HostCallError('CRASHED', 'compiler died'));
    const q = new CompileQueue(store.uploads, compiler);
    await q.submit({ tenantId: 't', kind: 'reducer', sources: [{ path: 'B.cs', content: '' }], uploadId: 'u1' });
    await q.idle();
    expect(compiler.calls).toEqual(['B.cs', 'B.cs', 'B.cs']);
    const u = await store.uploads.get('t', 'u1');
    expect(u?.status).toBe('failed');
    expect(u?.compilationError).toContain('CRASHED');
  });
});
