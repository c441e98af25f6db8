import * as os from 'node:os';
import { ConfigError, loadConfig } from './app-config';

describe('loadConfig', () => {
  it('uses the embedded defaults when nothing is set', () => {
    const c = loadConfig({});
    expect(c.port).toBe(3000);
    expect(c.databaseUrl).toBeUndefined();
    expect(c.dataDir).toMatch(/data$/);
  });

  it('serves metrics by default, publicly, off with METRICS_ENABLED=false, behind a token of at least 16 characters', () => {
    expect(loadConfig({}).metrics).toEqual({ enabled: true, token: undefined });
    expect(loadConfig({ METRICS_ENABLED: 'false' }).metrics.enabled).toBe(false);
    expect(loadConfig({ METRICS_ENABLED: 'true', METRICS_TOKEN: 'a-scraper-token-16' }).metrics).toEqual({
      enabled: true,
      token: 'a-scraper-token-16',
    });
    expect(() => loadConfig({ METRICS_ENABLED: 'no', METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN[\s\S]*METRICS_ENABLED/);
  });

  it('bounds compiles: a deadline near what real sources need, two compilers, a pending cap per tenant', () => {
    expect(loadConfig({}).runtime).toMatchObject({ compileDeadlineMs: 15_000, compilerHosts: 2, uploadPendingMaxPerTenant: 10 });
    const c = loadConfig({ RUNTIME_COMPILE_DEADLINE_MS: '4000', RUNTIME_COMPILER_HOSTS: '3', UPLOAD_PENDING_MAX_PER_TENANT: '1' });
    expect(c.runtime).toMatchObject({ compileDeadlineMs: 4000, compilerHosts: 3, uploadPendingMaxPerTenant: 1 });
    expect(() => loadConfig({ RUNTIME_COMPILER_HOSTS: '0', UPLOAD_PENDING_MAX_PER_TENANT: 'many' })).toThrow(
      /RUNTIME_COMPILER_HOSTS[\s\S]*UPLOAD_PENDING_MAX_PER_TENANT/,
    );
  });

  it('reads per-tenant quota defaults as rates and counts, 0 meaning no limit, and reports bad ones together', () => {
    expect(loadConfig({}).quotas).toEqual({
      defaults: {
        appendRequests: { quota: 20_000, windowSeconds: 10 },
        appendEvents: { quota: 200_000, windowSeconds: 10 },
        uploads: { quota: 60, windowSeconds: 3600 },
        streams: 500,
        webhooksInFlight: 16,
        storedEvents: 0,
        projections: 100,
        keysPerProjection: 100_000,
        pendingDeliveries: 10_000,
        eventWebhooks: 10,
      },
      overridesCacheMs: 5_000,
      refusalDelayMs: 500,
    });
    const c = loadConfig({ QUOTA_APPEND_REQUESTS: '100/1s', QUOTA_UPLOADS: '0', QUOTA_STREAMS: '0', QUOTA_STORED_EVENTS: '1000000' });
    expect(c.quotas.defaults).toMatchObject({
      appendRequests: { quota: 100, windowSeconds: 1 },
      uploads: { quota: 0 },
      streams: 0,
      storedEvents: 1_000_000,
    });
    expect(() => loadConfig({ QUOTA_APPEND_EVENTS: 'lots', QUOTA_UPLOADS: '5/2y', QUOTA_WEBHOOKS_IN_FLIGHT: '-1' })).toThrow(
      /QUOTA_APPEND_EVENTS[\s\S]*QUOTA_UPLOADS[\s\S]*QUOTA_WEBHOOKS_IN_FLIGHT|QUOTA_WEBHOOKS_IN_FLIGHT[\s\S]*QUOTA_APPEND_EVENTS[\s\S]*QUOTA_UPLOADS/,
    );
  });

  it('caps one tenant’s lanes in flight at half the lane slots unless told otherwise', () => {
    expect(loadConfig({}).lanes).toMatchObject({ concurrency: 64, maxInFlightPerTenant: 32 });
    expect(loadConfig({ LANE_CONCURRENCY: '5' }).lanes).toMatchObject({ concurrency: 5, maxInFlightPerTenant: 3 });
    expect(loadConfig({ LANE_MAX_IN_FLIGHT_PER_TENANT: '4' }).lanes.maxInFlightPerTenant).toBe(4);
    expect(() => loadConfig({ LANE_MAX_IN_FLIGHT_PER_TENANT: '0' })).toThrow(/LANE_MAX_IN_FLIGHT_PER_TENANT/);
  });

  it('leases a lane run for 3 s unless LANE_LEASE_MS says otherwise, refusing one under 300 ms', () => {
    expect(loadConfig({}).lanes.leaseMs).toBe(3_000);
    expect(loadConfig({ LANE_LEASE_MS: '2000' }).lanes.leaseMs).toBe(2_000);
    expect(() => loadConfig({ LANE_LEASE_MS: '100' })).toThrow(/LANE_LEASE_MS/);
  });

  it('writes JSON log lines unless LOG_FORMAT=pretty, and refuses another format with the other errors', () => {
    expect(loadConfig({}).logFormat).toBe('json');
    expect(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(() => loadConfig({ LOG_FORMAT: 'xml', LOG_LEVEL: 'loud' })).toThrow(
      /LOG_LEVEL[\s\S]*LOG_FORMAT must be one of json, pretty \(got 'xml'\)/,
    );
  });

  it('creates a first-run tenant unless FIRST_RUN_TENANT=false', () => {
    expect(loadConfig({}).firstRunTenant).toBe(true);
    expect(loadConfig({ FIRST_RUN_TENANT: 'false' }).firstRunTenant).toBe(false);
    expect(loadConfig({ FIRST_RUN_TENANT: '0' }).firstRunTenant).toBe(false);
    expect(loadConfig({ FIRST_RUN_TENANT: 'true' }).firstRunTenant).toBe(true);
    expect(() => loadConfig({ FIRST_RUN_TENANT: 'no' })).toThrow(/FIRST_RUN_TENANT must be true or false/);
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
    expect(loadConfig({}).runtime).toMatchObject({
      compileHeapMb: 1024,
      sandbox: { mode: 'strict', uid: 61000, gid: 61000, bwrap: 'bwrap' },
    });
    expect(loadConfig({ RUNTIME_SANDBOX: 'weak', RUNTIME_SANDBOX_UID: '5000' }).runtime.sandbox).toMatchObject({ mode: 'weak', uid: 5000 });
    expect(() => loadConfig({ RUNTIME_SANDBOX: 'off', RUNTIME_SANDBOX_UID: '0' })).toThrow(
      /RUNTIME_SANDBOX must be strict or weak[\s\S]*RUNTIME_SANDBOX_UID/,
    );
  });

  it('shares a fixed pool of executors between tenants by default, one per core, and knows both isolations', () => {
    expect(loadConfig({}).runtime).toMatchObject({
      isolation: 'shared',
      execHosts: Math.max(2, os.availableParallelism()),
      execAssemblyBudget: 1_000,
      execAssemblyBudgetBytes: 256 * 1024 * 1024,
      execTenantCalls: 8,
      quarantineMs: 60_000,
      quarantineMaxMs: 3_600_000,
      execStallMs: 500,
    });
    expect(loadConfig({ RUNTIME_ISOLATION: 'tenant' }).runtime).toMatchObject({ isolation: 'tenant', execHosts: 8 });
    expect(loadConfig({ RUNTIME_EXEC_HOSTS: '3' }).runtime.execHosts).toBe(3);
    expect(() => loadConfig({ RUNTIME_ISOLATION: 'process', RUNTIME_QUARANTINE_MS: '5000', RUNTIME_QUARANTINE_MAX_MS: '1000' })).toThrow(
      /RUNTIME_ISOLATION must be shared or tenant[\s\S]*RUNTIME_QUARANTINE_MAX_MS \(1000\) must not be less than RUNTIME_QUARANTINE_MS/,
    );
  });

  it('caps what one tenant may hold in an executor, at most half its heap', () => {
    expect(loadConfig({}).runtime).toMatchObject({ execHeapMb: 256, tenantMemoryMb: 32 });
    // A smaller heap gets an eighth of it by default, so a small heap still starts.
    expect(loadConfig({ RUNTIME_EXEC_HEAP_MB: '64' }).runtime.tenantMemoryMb).toBe(8);
    expect(loadConfig({ RUNTIME_TENANT_MEMORY_MB: '128' }).runtime.tenantMemoryMb).toBe(128);
    expect(() => loadConfig({ RUNTIME_TENANT_MEMORY_MB: '129' })).toThrow(
      /RUNTIME_TENANT_MEMORY_MB \(129\) must be at most half of RUNTIME_EXEC_HEAP_MB \(256\)/,
    );
    expect(() => loadConfig({ RUNTIME_TENANT_MEMORY_MB: '0' })).toThrow(/RUNTIME_TENANT_MEMORY_MB/);
  });

  it('has documented defaults for the connection and result limits', () => {
    const c = loadConfig({});
    expect(c.http).toEqual({
      requestTimeoutMs: 30_000,
      connectionTimeoutMs: 60_000,
      headersTimeoutMs: 10_000,
      bodyReadTimeoutMs: 10_000,
      refusedBodyLinger: { ms: 5_000, bytes: 16 * 1024 * 1024 },
    });
    expect(c.appendTurns).toEqual({ inFlightPerTenant: 4, queuedPerTenant: 1_000, contentionWindowMs: 1_000 });
    expect(c.runtime.maxStateBytes).toBe(1024 * 1024);
    expect(c.notifications.maxStreamsPerKey).toBe(100);
    expect(c.notifications.maxStreamsPerInstance).toBe(10_000);
  });

  it('refuses deadlines that Node would pre-empt and a per-key cap above the instance cap', () => {
    expect(() =>
      loadConfig({
        REQUEST_TIMEOUT_MS: '5000',
        BODY_READ_TIMEOUT_MS: '6000',
        HEADERS_TIMEOUT_MS: '7000',
        STREAM_MAX_PER_KEY: '11',
        STREAM_MAX_PER_INSTANCE: '10',
      }),
    ).toThrow(
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
