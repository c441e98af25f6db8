import { ConfigError, loadConfig } from './app-config';

describe('loadConfig', () => {
  it('uses the embedded defaults when nothing is set', () => {
    const c = loadConfig({});
    expect(c.port).toBe(3000);
    expect(c.databaseUrl).toBeUndefined();
    expect(c.dataDir).toMatch(/data$/);
  });

  it('bounds compiles: a deadline near what real sources need, two compilers, a pending cap per tenant', () => {
    expect(loadConfig({}).runtime).toMatchObject({ compileDeadlineMs: 15_000, compilerHosts: 2, uploadPendingMaxPerTenant: 10 });
    const c = loadConfig({ RUNTIME_COMPILE_DEADLINE_MS: '4000', RUNTIME_COMPILER_HOSTS: '3', UPLOAD_PENDING_MAX_PER_TENANT: '1' });
    expect(c.runtime).toMatchObject({ compileDeadlineMs: 4000, compilerHosts: 3, uploadPendingMaxPerTenant: 1 });
    expect(() => loadConfig({ RUNTIME_COMPILER_HOSTS: '0', UPLOAD_PENDING_MAX_PER_TENANT: 'many' })).toThrow(/RUNTIME_COMPILER_HOSTS[\s\S]*UPLOAD_PENDING_MAX_PER_TENANT/);
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
});
