import { CompileQueue } from '../tenant-code/compiler/compile-queue';
import { CompileResult } from '../tenant-code/host/runtime-protocol';
import { SqliteStore } from '../store/sqlite/sqlite-store';
import { UploadKind, UploadRecord } from '../store/upload-repository.port';
import { Compiler } from '../tenant-code/compiler.port';
import { CompileWorker } from './compile-worker';
import { elapse } from '../../test/support/wait';

const compiled: CompileResult = {
  ok: true,
  discovered: [{ className: 'A.Thing', stateTypeName: 'S', kind: 'reducer', aggregateType: 'account' }],
  assembly: Buffer.from('dll').toString('base64'),
  assemblySha256: 'sha',
  warnings: [],
  diagnostics: [],
};
const broken: CompileResult = { ok: false, compilationError: 'A.cs(1,1): error CS1002', diagnostics: [], warnings: [] };

/** Answers by the single file's name: `bad*` does not compile. */
const compiler: Compiler = { compile: async (files) => (files[0].path.startsWith('bad') ? broken : compiled) };

async function setup(owners: { autoBind?: (u: UploadRecord) => Promise<void>; deploy?: (u: UploadRecord) => Promise<void> } = {}) {
  const store = new SqliteStore({ file: ':memory:' });
  await store.migrate();
  const queue = new CompileQueue(store.uploads, { concurrency: 1 });
  const calls: string[] = [];
  const reducers = { autoBind: owners.autoBind ?? (async (u: UploadRecord) => void calls.push(`autoBind ${u.uploadId} ${u.status}`)) };
  const projections = { deploy: owners.deploy ?? (async (u: UploadRecord) => void calls.push(`deploy ${u.uploadId} ${u.status}`)) };
  const worker = new CompileWorker(queue, compiler, store.uploads, reducers, projections);
  const submit = (kind: UploadKind, id: string) =>
    queue.submit({ tenantId: 't', kind, sources: [{ path: id, content: '' }], uploadId: id });
  return { store, queue, worker, calls, submit };
}

describe('CompileWorker', () => {
  it('hands a compiled reducer to the reducer catalog and a compiled projection to the projection catalog', async () => {
    const { queue, worker, calls, submit } = await setup();
    await submit('reducer', 'r1');
    await submit('projection', 'p1');
    worker.start();
    await queue.idle();
    // Submitted in one millisecond, the two may compile in either order.
    expect(calls.sort()).toEqual(['autoBind r1 compiled', 'deploy p1 compiled']);
    await worker.close();
  });

  it('hands over nothing of an upload that failed to compile', async () => {
    const { store, queue, worker, calls, submit } = await setup();
    await submit('reducer', 'bad-r');
    await submit('projection', 'bad-p');
    worker.start();
    await queue.idle();
    expect(calls).toEqual([]);
    expect((await store.uploads.get('t', 'bad-p'))?.status).toBe('failed');
    await worker.close();
  });

  it('hands over only after the compile is recorded, and ends the tenant’s turn only after the hand-over', async () => {
    const order: string[] = [];
    let storedAtHandOver: string | undefined;
    const { store, queue, worker, submit } = await setup({
      autoBind: async (u) => {
        storedAtHandOver = (await store.uploads.get('t', u.uploadId))?.status;
        await elapse(20, 'a slow bind: the turn must not end before it');
        order.push(`bound ${u.uploadId}`);
      },
    });
    const compile = compiler.compile.bind(compiler);
    jest.spyOn(compiler, 'compile').mockImplementation(async (files, kind) => {
      order.push(`compile ${files[0].path}`);
      return compile(files, kind);
    });
    await submit('reducer', 'r1');
    await submit('reducer', 'r2');
    worker.start();
    await queue.idle();
    expect(storedAtHandOver).toBe('compiled');
    expect(order).toEqual(['compile r1', 'bound r1', 'compile r2', 'bound r2']);
    jest.restoreAllMocks();
    await worker.close();
  });

  it('goes on with the next compile when an owner fails on one', async () => {
    const { store, queue, worker, submit } = await setup({ deploy: async () => Promise.reject(new Error('deploy broke')) });
    await submit('projection', 'p1');
    await submit('projection', 'p2');
    worker.start();
    await queue.idle();
    expect((await store.uploads.get('t', 'p1'))?.status).toBe('compiled');
    expect((await store.uploads.get('t', 'p2'))?.status).toBe('compiled');
    await worker.close();
  });
});
