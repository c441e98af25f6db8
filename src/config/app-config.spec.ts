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

  it('caps one tenant’s lanes in flight at half the lane slots unless told otherwise', () => {
    expect(loadConfig({}).lanes).toMatchObject({ concurrency: 64, maxInFlightPerTenant: 32 });
    expect(loadConfig({ LANE_CONCURRENCY: '5' }).lanes).toMatchObject({ concurrency: 5, maxInFlightPerTenant: 3 });
    expect(loadConfig({ LANE_MAX_IN_FLIGHT_PER_TENANT: '4' }).lanes.maxInFlightPerTenant).toBe(4);
    expect(() => loadConfig({ LANE_MAX_IN_FLIGHT_PER_TENANT: '0' })).toThrow(/LANE_MAX_IN_FLIGHT_PER_TENANT/);
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

  it('has documented defaults for the connection and result limits', () => {
    const c = loadConfig({});
    expect(c.http).toEqual({ requestTimeoutMs: 30_000, connectionTimeoutMs: 60_000, headersTimeoutMs: 10_000, bodyReadTimeoutMs: 10_000 });
    expect(c.runtime.maxStateBytes).toBe(1024 * 1024);
    expect(c.notifications.maxStreamsPerKey).toBe(100);
    expect(c.notifications.maxStreamsPerInstance).toBe(10_000);
  });

  it('refuses deadlines that Node would pre-empt and a per-key cap above the instance cap', () => {
    expect(() => loadConfig({ REQUEST_TIMEOUT_MS: '5000', BODY_READ_TIMEOUT_MS: '6000', HEADERS_TIMEOUT_MS: '7000', STREAM_MAX_PER_KEY: '11', STREAM_MAX_PER_INSTANCE: '10' })).toThrow(
      expect.objectContaining({
        problems: [
          'HEADERS_TIMEOUT_MS (7000) must not exceed REQUEST_TIMEOUT_MS (5000)',
          'BODY_READ_TIMEOUT_MS (6000) must not exceed REQUEST_TIMEOUT_MS (5000)',
          'STREAM_MAX_PER_KEY must not exceed STREAM_MAX_PER_INSTANCE',
        ],
      }),
    );
    expect(() => loadConfig({ STATE_MAX_BYTES: String(17 * 1024 * 1024) })).toThrow(/STATE_MAX_BYTES/);
  });
});
