import { ConfigError, loadConfig } from './app-config';

describe('loadConfig', () => {
  it('uses the embedded defaults when nothing is set', () => {
    const c = loadConfig({});
    expect(c.port).toBe(3000);
    expect(c.databaseUrl).toBeUndefined();
    expect(c.dataDir).toMatch(/data$/);
  });

  it('reports every bad variable together', () => {
    let err: unknown;
    try {
      loadConfig({ PORT: 'abc', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud', ADMIN_TOKEN: 'short' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems.join('\n');
    expect(problems).toContain('PORT');
    expect(problems).toContain('DATABASE_URL');
    expect(problems).toContain('LOG_LEVEL');
    expect(problems).toContain('ADMIN_TOKEN');
  });

  it('fences the runtime strictly by default, as uid/gid 61000, and refuses a sandbox mode it does not know', () => {
    expect(loadConfig({}).runtime).toMatchObject({ compileHeapMb: 1024, sandbox: { mode: 'strict', uid: 61000, gid: 61000, bwrap: 'bwrap' } });
    expect(loadConfig({ RUNTIME_SANDBOX: 'weak', RUNTIME_SANDBOX_UID: '5000' }).runtime.sandbox).toMatchObject({ mode: 'weak', uid: 5000 });
    expect(() => loadConfig({ RUNTIME_SANDBOX: 'off', RUNTIME_SANDBOX_UID: '0' })).toThrow(/RUNTIME_SANDBOX must be strict or weak[\s\S]*RUNTIME_SANDBOX_UID/);
  });
});
