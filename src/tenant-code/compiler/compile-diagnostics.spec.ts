import { compileDiagnostics, toDiagnostic } from './compile-diagnostics';

describe('compile diagnostics', () => {
  it('gives a host diagnostic the shared shape, its hint apart from the message', () => {
    const d = toDiagnostic({
      path: 'A.cs',
      line: 3,
      column: 9,
      severity: 'error',
      id: 'CS8795',
      message: "Partial method 'M' must have an implementation part [generators are not run]",
      hint: 'generators are not run',
    });
    expect(d).toEqual({
      severity: 'error',
      code: 'CS8795',
      message: "Partial method 'M' must have an implementation part",
      file: 'A.cs',
      line: 3,
      column: 9,
      hint: 'generators are not run',
    });
  });

  it('points a sandbox refusal at the docs', () => {
    const d = toDiagnostic({
      path: 'A.cs',
      line: 1,
      column: 1,
      severity: 'error',
      id: 'ES0001',
      message: 'forbidden API: System.Guid.NewGuid (…)',
    });
    expect(d.hint).toContain('What your code may use');
    expect(d.message).toBe('forbidden API: System.Guid.NewGuid (…)');
  });

  it('says null for a diagnostic without a location', () => {
    expect(toDiagnostic({ path: null, line: 0, column: 0, severity: 'error', id: 'ES0003', message: 'dup' })).toEqual({
      severity: 'error',
      code: 'ES0003',
      message: 'dup',
      file: null,
      line: null,
      column: null,
    });
  });

  it('keeps the summary of a failed compile that has no error diagnostic, before its warnings', () => {
    const out = compileDiagnostics({
      ok: false,
      compilationError: 'the archive contains no .cs files',
      diagnostics: [{ path: 'B.cs', line: 1, column: 2, severity: 'warning', id: 'CS8618', message: 'w' }],
      warnings: [],
    });
    expect(out.map((d) => `${d.severity} ${d.code}`)).toEqual(['error COMPILE_FAILED', 'warning CS8618']);
  });

  it('reads a compiled result of an older host (no diagnostics) as none', () => {
    expect(compileDiagnostics({ ok: true, discovered: [], assembly: '', assemblySha256: '', warnings: [] } as never)).toEqual([]);
  });
});
