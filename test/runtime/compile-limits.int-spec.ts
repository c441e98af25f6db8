import { HostCallError } from '../../src/tenant-code/host/host-process';
import { RuntimePool } from '../../src/tenant-code/runtime-pool';
import { deepParentheses, pathologicalFixture } from '../support/pathological-sources';
import { exampleSources, realPool } from '../support/runtime-harness';
import { elapse } from '../support/wait';

jest.setTimeout(120_000);

const DEADLINE_MS = 6000;
let pool: RuntimePool;

beforeAll(() => {
  pool = realPool({ compilerHosts: 2, compileDeadlineMs: DEADLINE_MS }).pool;
});
afterAll(() => pool?.close());

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await elapse(50, 'poll interval');
  }
}

const timed = async <T>(p: Promise<T>) => {
  const t0 = Date.now();
  const value = await p.then(
    (v) => ({ ok: true as const, v }),
    (e: HostCallError) => ({ ok: false as const, e }),
  );
  return { ...value, ms: Date.now() - t0 };
};

describe('compiles that cannot hold others up (real compiler hosts)', () => {
  it('starts every compiler host ahead of the first upload, each its own process', async () => {
    pool.startCompilers();
    const pids = await until(
      () => pool.compilerPids(),
      (p) => p.every((x) => x !== undefined),
    );
    expect(pids).toHaveLength(2);
    expect(new Set(pids).size).toBe(2);
    // Two compiles at once take both compilers: each has compiled once (warm), as after a while in service.
    const warm = await Promise.all([pool.compile(exampleSources('customer-totals')), pool.compile(exampleSources('customer-totals'))]);
    expect(warm.map((r) => r.ok)).toEqual([true, true]);
    expect(await pool.compilerPids()).toEqual(pids);
  });

  it('stops a compile at the deadline and replaces its compiler, while the other compiler keeps serving', async () => {
    const before = await pool.compilerPids();
    const slow = timed(pool.compile(pathologicalFixture('compile-lambda-overloads-4x11').files));
    const ordinary = await timed(pool.compile(exampleSources('bank-account')));
    expect(ordinary).toMatchObject({ ok: true, v: { ok: true } });
    expect(ordinary.ms).toBeLessThan(5000);
    const stopped = await slow;
    expect(!stopped.ok && stopped.e.failure).toBe('TIMEOUT');
    expect(stopped.ms).toBeGreaterThanOrEqual(DEADLINE_MS);
    expect(stopped.ms).toBeLessThan(DEADLINE_MS + 1500);
    // The killed compiler is replaced at once: a new process, not one started on next use.
    const after = await until(
      () => pool.compilerPids(),
      (p) => p.every((x) => x !== undefined) && p.some((x) => !before.includes(x)),
    );
    expect(after.filter((p) => before.includes(p))).toHaveLength(1);
    expect(await pool.compile(exampleSources('orders'))).toMatchObject({ ok: true });
  });

  it('fails a compile whose compiler is killed with CRASHED, and replaces that compiler', async () => {
    const before = await pool.compilerPids();
    const running = timed(pool.compile(pathologicalFixture('compile-lambda-overloads-4x11').files));
    await elapse(500, 'the compile is under way before the kill (the pool shows no sign of it)');
    // Kill both processes: only one has a compile in flight (the other is replaced on its next use).
    for (const pid of before) process.kill(pid!, 'SIGKILL');
    const crashed = await running;
    expect(!crashed.ok && crashed.e.failure).toBe('CRASHED');
    const after = await until(
      () => pool.compilerPids(),
      (p) => p.some((x) => x !== undefined && !before.includes(x)),
    );
    expect(after.some((p) => p !== undefined && !before.includes(p))).toBe(true);
    // The replacement compiles (once more if a loaded machine kept its cold first compile past the deadline).
    const next = await pool.compile(exampleSources('bank-account')).catch((e: HostCallError) => {
      if (e.failure !== 'TIMEOUT') throw e;
      return pool.compile(exampleSources('bank-account'));
    });
    expect(next).toMatchObject({ ok: true });
  });

  it('answers 100k nested parentheses with a clean compile error (CS8078), not a dead compiler', async () => {
    const pids = await pool.compilerPids();
    const r = await timed(pool.compile(deepParentheses(100_000).files));
    expect(r.ok && !r.v.ok && r.v.compilationError).toMatch(/error CS8078: An expression is too long or complex to compile/);
    expect(r.ms).toBeLessThan(2000);
    expect(await pool.compilerPids()).toEqual(pids);
  });

  it('stops and replaces a compiler that failed on a huge constant, so that it gives back what it took', async () => {
    const before = await pool.compilerPids();
    const r = await timed(pool.compile(pathologicalFixture('compile-doubling-consts').files));
    expect(r.ok).toBe(false);
    // An error envelope (out of memory, a metadata limit) or a death: either way not a result, and that process is gone.
    expect(!r.ok && ['INTERNAL', 'CRASHED', 'TIMEOUT']).toContain(!r.ok && r.e.failure);
    const after = await until(
      () => pool.compilerPids(),
      (p) => p.every((x) => x !== undefined) && p.some((x) => !before.includes(x)),
    );
    expect(after.filter((p) => before.includes(p))).toHaveLength(1);
  });
});
