import { DryRunSettings } from '../config/dry-run-settings';
import { BindingRepository } from '../store/reducer-state.port';
import { ProjectionCatalogRepository } from '../store/projection-catalog.port';
import { Compiler } from '../tenant-code/compiler.port';
import { CompileResult } from '../tenant-code/host/runtime-protocol';
import { TenantCode } from '../tenant-code/tenant-code.port';
import { TransientAssemblies } from '../tenant-code/transient-assemblies';
import { until } from '../../test/support/wait';
import { zipSources } from '../../test/support/zip-writer';
import { DryRunReport } from './dry-run-views';
import { chooseClass, DryRuns } from './dry-runs';
import { ProjectionDryRun } from './projection-dry-run';
import { ReducerDryRun } from './reducer-dry-run';

const SETTINGS: DryRunSettings = { maxEvents: 100, maxKeys: 100, maxStateBytes: 1 << 20, maxDurationMs: 1_000, keepMs: 60_000 };
const REPORT = { keys: { added: 0 } } as unknown as DryRunReport;
const COMPILED: CompileResult = {
  ok: true,
  discovered: [{ className: 'Wallets.WalletReducer', stateTypeName: 'Wallet', kind: 'reducer', aggregateType: 'wallet' }],
  assembly: Buffer.from('dll').toString('base64'),
  assemblySha256: '',
  warnings: [],
  diagnostics: [],
};

function world(opts: { compiled?: CompileResult; run?: () => Promise<DryRunReport> } = {}) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const transient = new TransientAssemblies();
  const heldDuringRun: number[] = [];
  const unloaded: string[] = [];
  const code = { unload: async (_t: string, id: string) => void unloaded.push(id) } as unknown as TenantCode;
  const compiler: Compiler = { compile: async () => opts.compiled ?? COMPILED };
  const reducerRun = {
    run: async () => {
      heldDuringRun.push(transient.size);
      await gate;
      return opts.run ? opts.run() : REPORT;
    },
  } as unknown as ReducerDryRun;
  const bindings = { get: async () => null } as unknown as BindingRepository;
  let now = 1_000;
  const dryRuns = new DryRuns(
    compiler,
    code,
    transient,
    {} as ProjectionCatalogRepository,
    bindings,
    {} as ProjectionDryRun,
    reducerRun,
    SETTINGS,
    () => now,
  );
  return { dryRuns, release, transient, heldDuringRun, unloaded, advance: (ms: number) => (now += ms) };
}

const form = (fields: Record<string, string> = {}) => ({ file: zipSources([{ path: 'W.cs', content: 'class W {}' }]), fields });

describe('DryRuns', () => {
  it('runs one dry run per tenant at a time, and holds the candidate only while it runs', async () => {
    const w = world();
    const { dryRunId } = await w.dryRuns.startReducer('t1', 'wallet', form());
    await expect(w.dryRuns.startReducer('t1', 'wallet', form())).rejects.toMatchObject({ code: 'DRY_RUN_RUNNING', details: { dryRunId } });
    // Another tenant is not held up.
    await w.dryRuns.startReducer('t2', 'wallet', form());
    await until(
      () => w.heldDuringRun.length,
      (n) => n === 2,
    );
    expect(w.dryRuns.status('t1', 'reducer', 'wallet', dryRunId)).toMatchObject({ status: 'running', finishedAt: null });
    w.release();
    const done = await until(
      () => w.dryRuns.status('t1', 'reducer', 'wallet', dryRunId),
      (v) => v.status === 'completed',
    );
    expect(done.report).toBe(REPORT);
    await until(
      () => w.transient.size,
      (n) => n === 0,
    );
    expect(w.heldDuringRun).toEqual([1, 2]);
    expect(w.unloaded).toContain(`dry-run~${dryRunId}`);
    // Its turn is over: the tenant may start another.
    await expect(w.dryRuns.startReducer('t1', 'wallet', form())).resolves.toMatchObject({ status: 'running' });
  });

  it('unloads the candidate when the run fails, and reports why', async () => {
    const w = world({ run: async () => Promise.reject(new Error('boom')) });
    const { dryRunId } = await w.dryRuns.startReducer('t1', 'wallet', form());
    w.release();
    const v = await until(
      () => w.dryRuns.status('t1', 'reducer', 'wallet', dryRunId),
      (s) => s.status === 'failed',
    );
    expect(v.error).toEqual({ code: 'INTERNAL', message: 'the dry run failed on an internal error' });
    expect(w.unloaded).toEqual([`dry-run~${dryRunId}`]);
    expect(w.transient.size).toBe(0);
  });

  it('answers a failed compile with its diagnostics in the shared shape, nothing held', async () => {
    const w = world({
      compiled: {
        ok: false,
        compilationError: 'W.cs(2,5): error CS0103: no y',
        diagnostics: [{ path: 'W.cs', line: 2, column: 5, severity: 'error', id: 'CS0103', message: 'no y' }],
        warnings: [],
      },
    });
    const { dryRunId } = await w.dryRuns.startReducer('t1', 'wallet', form());
    const v = await until(
      () => w.dryRuns.status('t1', 'reducer', 'wallet', dryRunId),
      (s) => s.status === 'failed',
    );
    expect(v.error?.code).toBe('COMPILATION_FAILED');
    expect(v.diagnostics).toEqual([{ severity: 'error', code: 'CS0103', message: 'no y', file: 'W.cs', line: 2, column: 5 }]);
    expect(w.heldDuringRun).toEqual([]);
  });

  it('keeps a finished run for DRY_RUN_KEEP_MS, and never shows it to another tenant or target', async () => {
    const w = world();
    const { dryRunId } = await w.dryRuns.startReducer('t1', 'wallet', form());
    w.release();
    await until(
      () => w.dryRuns.status('t1', 'reducer', 'wallet', dryRunId),
      (s) => s.status === 'completed',
    );
    expect(() => w.dryRuns.status('t2', 'reducer', 'wallet', dryRunId)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
    expect(() => w.dryRuns.status('t1', 'reducer', 'purse', dryRunId)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
    w.advance(SETTINGS.keepMs + 1);
    expect(() => w.dryRuns.status('t1', 'reducer', 'wallet', dryRunId)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
  });
});

describe('chooseClass', () => {
  const d = (className: string, kind: 'reducer' | 'projection', aggregateType?: string) => ({
    className,
    stateTypeName: 'S',
    kind,
    aggregateType,
  });

  it('takes the class asked for, the reducer of the type, or the only one of the kind', () => {
    const found = [d('A', 'reducer', 'a'), d('B', 'reducer', 'b'), d('P', 'projection')];
    expect(chooseClass({ kind: 'reducer', target: 'b' }, found, null)).toBe('B');
    expect(chooseClass({ kind: 'reducer', target: 'x' }, found, 'A')).toBe('A');
    expect(chooseClass({ kind: 'projection', target: 'p' }, found, null)).toBe('P');
  });

  it('refuses an unknown class, none, or several without a name', () => {
    const found = [d('A', 'reducer', 'a'), d('B', 'reducer', 'b')];
    expect(() => chooseClass({ kind: 'reducer', target: 'x' }, found, null)).toThrow(/several reducers \(A, B\)/);
    expect(() => chooseClass({ kind: 'reducer', target: 'a' }, found, 'C')).toThrow(/no reducer class 'C'/);
    expect(() => chooseClass({ kind: 'projection', target: 'p' }, found, null)).toThrow(/no projection implementation/);
  });
});
