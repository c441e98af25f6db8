import * as path from 'node:path';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export interface AppConfig {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl?: string;
  redisUrl?: string;
  adminToken?: string;
  bootstrapApiKey?: string;
  bootstrapTenantName: string;
  logLevel: LogLevel;
  /** How long an API key stays cached before the store is asked again (revocation on other instances). */
  apiKeyCacheMs: number;
  /** Graceful shutdown: how long in-flight requests get before the process exits anyway. */
  shutdownGraceMs: number;
  lanes: {
    /** Lanes run at once per service instance. */
    concurrency: number;
    /** Delays before each retry of a failing event; past the last the lane is held. */
    backoffMs: number[];
    /** How often the store is swept for lanes with work (after a lost wake-up) and catch-up checked. */
    sweepMs: number;
    /** How long a state read with minPosition waits before answering 202. */
    readWaitMs: number;
  };
  runtime: {
    /** Folder of the built .NET host (runtime/build.sh output); default runtime/bin. */
    dir?: string;
    /** Executor processes (one per tenant) alive at once. */
    execHosts: number;
    execIdleMs: number;
    /** Deadline of one Apply/ResolveKey call; past it the executor is killed and replaced. */
    callDeadlineMs: number;
    compileDeadlineMs: number;
    /** Managed heap cap of an executor (DOTNET_GCHeapHardLimit), MiB; RLIMIT_DATA is 4× this plus 1 GiB. */
    execHeapMb: number;
    /** How long an append waits for an executor that cannot be started before answering 503. */
    unavailableWaitMs: number;
  };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment once, reporting every bad variable together. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const problems: string[] = [];
  const int = (name: string, def: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return def;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name} must be an integer between ${min} and ${max} (got '${raw}')`);
      return def;
    }
    return n;
  };
  const str = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };

  const databaseUrl = str('DATABASE_URL');
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push(`DATABASE_URL must be a postgres:// or postgresql:// URL`);
  }
  const redisUrl = str('REDIS_URL');
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) problems.push(`REDIS_URL must be a redis:// or rediss:// URL`);

  const adminToken = str('ADMIN_TOKEN');
  if (adminToken && adminToken.length < 16) problems.push('ADMIN_TOKEN must be at least 16 characters');
  const bootstrapApiKey = str('BOOTSTRAP_API_KEY');
  if (bootstrapApiKey && (bootstrapApiKey.length < 16 || bootstrapApiKey.length > 200)) {
    problems.push('BOOTSTRAP_API_KEY must be 16 to 200 characters');
  }
  const logLevel = (str('LOG_LEVEL') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);

  const config: AppConfig = {
    port: int('PORT', 3000, 0, 65535),
    host: str('HOST') ?? '0.0.0.0',
    dataDir: path.resolve(str('DATA_DIR') ?? './data'),
    databaseUrl,
    redisUrl,
    adminToken,
    bootstrapApiKey,
    bootstrapTenantName: str('BOOTSTRAP_TENANT_NAME') ?? 'bootstrap',
    logLevel,
    apiKeyCacheMs: int('API_KEY_CACHE_MS', 10_000, 0, 3_600_000),
    shutdownGraceMs: int('SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    lanes: {
      concurrency: int('LANE_CONCURRENCY', 8, 1, 256),
      backoffMs: (str('LANE_RETRY_BACKOFF_MS') ?? '100,500,2000').split(',').map((x) => {
        const v = Number(x.trim());
        if (!Number.isInteger(v) || v < 0 || v > 3_600_000) problems.push(`LANE_RETRY_BACKOFF_MS must be comma-separated milliseconds (got '${x}')`);
        return v;
      }),
      sweepMs: int('LANE_SWEEP_MS', 2_000, 50, 600_000),
      readWaitMs: int('PROJECTION_READ_WAIT_MS', 5_000, 0, 60_000),
    },
    runtime: {
      dir: str('RUNTIME_DIR'),
      execHosts: int('RUNTIME_EXEC_HOSTS', 8, 1, 1000),
      execIdleMs: int('RUNTIME_EXEC_IDLE_MS', 300_000, 1_000, 86_400_000),
      callDeadlineMs: int('RUNTIME_CALL_DEADLINE_MS', 5_000, 100, 600_000),
      compileDeadlineMs: int('RUNTIME_COMPILE_DEADLINE_MS', 120_000, 1_000, 3_600_000),
      execHeapMb: int('RUNTIME_EXEC_HEAP_MB', 256, 32, 65_536),
      unavailableWaitMs: int('RUNTIME_UNAVAILABLE_WAIT_MS', 5_000, 0, 600_000),
    },
  };
  if (problems.length) throw new ConfigError(problems);
  return config;
}
