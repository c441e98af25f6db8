import * as path from 'node:path';
import { parseRate, RatePolicy, TenantLimits } from './quota-policy';
import { DryRunSettings, dryRunSettings } from './dry-run-settings';
import { defaultExecHosts, Isolation, ISOLATIONS, SandboxMode, SandboxOptions } from './isolation-settings';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
/** json: one JSON object per line (for log collectors); pretty: one readable line each (for people). */
export type LogFormat = 'json' | 'pretty';
const LOG_FORMATS: LogFormat[] = ['json', 'pretty'];

export interface AppConfig {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl?: string;
  /** PostgreSQL: connections of the lanes' own pool (LANE_POOL_SIZE), beside the appends' 10. */
  lanePoolSize?: number;
  redisUrl?: string;
  adminToken?: string;
  bootstrapApiKey?: string;
  bootstrapTenantName: string;
  /**
   * On a store without tenants, and with neither ADMIN_TOKEN nor BOOTSTRAP_API_KEY, create a tenant
   * named `default` and print its key once at start (src/tenancy/first-run.ts).
   */
  firstRunTenant: boolean;
  logLevel: LogLevel;
  logFormat: LogFormat;
  /** How long an API key stays cached before the store is asked again (revocation on other instances). */
  apiKeyCacheMs: number;
  /** POST /admin/tenants/import: the most bytes of an export body (spooled to a temporary file, never held in memory). */
  tenantImportMaxBytes: number;
  /** Graceful shutdown: how long in-flight requests get before the process exits anyway. */
  shutdownGraceMs: number;
  /** GET /metrics (docs/operations.md): on unless METRICS_ENABLED=false; behind `Authorization: Bearer <token>` when a token is set. */
  metrics: { enabled: boolean; token?: string };
  /** Idempotency-Key on appends (README "Retrying appends safely"). */
  idempotency: {
    /** A key is remembered this long after its append (ms); a repeat after that is a new request. */
    keepMs: number;
    /** How often each instance deletes expired keys (ms). */
    sweepMs: number;
    /** Tests only (TEST_KILL_AFTER_COMMIT_KEY): SIGKILL the process after an append with this key commits, before it is answered. */
    killAfterCommitKey?: string;
  };
  /** Per-tenant turns for append requests on an instance's event loop (src/events/append-turns.ts). */
  appendTurns: { inFlightPerTenant: number; queuedPerTenant: number; contentionWindowMs: number };
  /** Deadlines on a connection and a request (streams, once open, are exempt). */
  http: {
    /** Node's cut-off for receiving a whole request (headers and body); answered 408 REQUEST_TIMEOUT. */
    requestTimeoutMs: number;
    /** A socket with no traffic this long is closed (idle keep-alive, a stalled request). */
    connectionTimeoutMs: number;
    /** The request's headers must have arrived within this. */
    headersTimeoutMs: number;
    /** A body not fully arrived this long after its headers: 408 REQUEST_TIMEOUT, connection closed. */
    bodyReadTimeoutMs: number;
    /** A body refused before it was read is still read and thrown away this long, up to this many bytes, after the answer. */
    refusedBodyLinger: { ms: number; bytes: number };
  };
  lanes: {
    /** Lanes run at once per service instance. */
    concurrency: number;
    /**
     * Lanes of one tenant in flight at once per instance (running in-process; in Redis with BullMQ),
     * so that other tenants always find free slots; tenants with waiting lanes take turns.
     */
    maxInFlightPerTenant: number;
    /** Delays before each retry of a failing event; past the last the lane is held. */
    backoffMs: number[];
    /** How often the store is swept for lanes with work (after a lost wake-up) and catch-up checked. */
    sweepMs: number;
    /**
     * With BullMQ: a lane run's lease in the store (renewed every third of it while the run lasts)
     * and the job lock: how long a crashed instance's running lanes wait at most.
     */
    leaseMs: number;
    /** How long a state read with minPosition waits before answering 202. */
    readWaitMs: number;
  };
  /** Dry runs of candidate code over a tenant's history (dry-run-settings.ts). */
  dryRun: DryRunSettings;
  runtime: {
    /** Folder of the built .NET host (runtime/build.sh output); default runtime/bin. */
    dir?: string;
    /** shared: executors run many tenants' assemblies; tenant: one executor per tenant. */
    isolation: Isolation;
    /** shared: the executor processes (a fixed pool); tenant: executor processes alive at once. */
    execHosts: number;
    execIdleMs: number;
    /** Per executor: assemblies loaded at once, and their DLL bytes; past either the least recently used is unloaded. */
    execAssemblyBudget: number;
    execAssemblyBudgetBytes: number;
    /** Calls of one tenant sent to an executor and unanswered at once (fairness between tenants). */
    execTenantCalls: number;
    /** shared: a tenant whose call killed or hung an executor runs apart this long, doubling per repeat up to the max. */
    quarantineMs: number;
    quarantineMaxMs: number;
    /** shared: a call running this long while other tenants' calls wait gets its executor replaced at once (0: only at the deadline). */
    execStallMs: number;
    /** Deadline of one Apply/ResolveKey call; past it the executor is killed and replaced. */
    callDeadlineMs: number;
    /** Deadline of one compile; past it the compiler is killed and replaced, the upload failed (not retried). */
    compileDeadlineMs: number;
    /** Compiler processes, each compiling one upload at a time. */
    compilerHosts: number;
    /** Uploads (reducers and projections together) of one tenant still waiting to compile; past it 429. */
    uploadPendingMaxPerTenant: number;
    /** Managed heap cap of an executor (DOTNET_GCHeapHardLimit), MiB; RLIMIT_DATA is 4× this plus 1 GiB. */
    execHeapMb: number;
    /** What one tenant's assemblies may hold in one executor (code, statics, runners), MiB; past it TENANT_MEMORY_EXCEEDED. */
    tenantMemoryMb: number;
    /** How long an append waits for an executor that cannot be started before answering 503. */
    unavailableWaitMs: number;
    /** Managed heap cap of the compiler, MiB; RLIMIT_DATA as for executors. */
    compileHeapMb: number;
    /** The operating-system fences around executors and the compiler (src/tenant-code/host/sandbox.ts). */
    sandbox: SandboxOptions;
    /** A reducer's or projection's state whose JSON is longer fails its event with STATE_TOO_LARGE (checked in the host). */
    maxStateBytes: number;
  };
  notifications: {
    /** Retention: the newest N per projection are kept whatever their age… */
    keepCount: number;
    /** …and older ones go once they are this old (ms). */
    keepMs: number;
    retentionSweepMs: number;
    pageDefault: number;
    pageMax: number;
    /** WebSocket keepalive: a ping this often; no pong by the next ping closes the socket. */
    pingMs: number;
    /** Streams re-read the store's head this often, for notifications another instance logged (no Redis, or Redis down). */
    pollMs: number;
    sseHeartbeatMs: number;
    /** A stream client further behind than this (bytes queued on its socket) is closed, to resume from its cursor. */
    maxBufferedBytes: number;
    /** WebSocket + SSE streams open at once with one API key, and on this instance in all. */
    maxStreamsPerKey: number;
    maxStreamsPerInstance: number;
  };
  webhooks: {
    /** Delays before each retry; past the last the delivery is dead-lettered. */
    backoffMs: number[];
    timeoutMs: number;
    pollMs: number;
    /** How often each instance looks for keys whose deliveries wait with no head (the repair sweep). */
    repairMs: number;
    concurrency: number;
    /** Development/tests only: allow URLs on loopback, private and link-local addresses. */
    allowPrivate: boolean;
    /** After a rotation, deliveries are signed with the old secret too for this long. */
    secretOverlapMs: number;
    /** Base64 of 32 bytes that encrypt secrets at rest; default: a key file in DATA_DIR. */
    secretsKey?: string;
    /** Dead-lettered deliveries are deleted this long after they died (ms). */
    deadKeepMs: number;
  };
  /** Per-tenant quotas and rate limits (src/quotas); 0 means no limit. */
  quotas: {
    /** What every tenant gets unless the admin API or CLI overrides it. */
    defaults: TenantLimits;
    /** How long a tenant's overrides are cached: a change made elsewhere (CLI, another instance) shows within this. */
    overridesCacheMs: number;
    /**
     * A rate refusal is answered after this pause (never past its Retry-After), so a client hammering
     * past its quota waits instead of spinning.
     */
    refusalDelayMs: number;
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

  const msList = (name: string, def: string): number[] =>
    (str(name) ?? def).split(',').map((x) => {
      const v = Number(x.trim());
      if (!Number.isInteger(v) || v < 0 || v > 86_400_000) problems.push(`${name} must be comma-separated milliseconds (got '${x}')`);
      return v;
    });
  const rate = (name: string, def: string): RatePolicy => {
    const parsed = parseRate(str(name) ?? def);
    if (typeof parsed === 'string') {
      problems.push(`${name}: ${parsed}`);
      return parseRate(def) as RatePolicy;
    }
    return parsed;
  };
  const bool = (name: string): boolean => {
    const v = str(name);
    if (v !== undefined && !['true', 'false', '1', '0'].includes(v)) problems.push(`${name} must be true or false`);
    return v === 'true' || v === '1';
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
  const metricsToken = str('METRICS_TOKEN');
  if (metricsToken && metricsToken.length < 16) problems.push('METRICS_TOKEN must be at least 16 characters');
  const isolation = (str('RUNTIME_ISOLATION') ?? 'shared') as Isolation;
  const execHeapMb = int('RUNTIME_EXEC_HEAP_MB', 256, 32, 65_536);
  if (!ISOLATIONS.includes(isolation)) problems.push(`RUNTIME_ISOLATION must be shared or tenant (got '${isolation}')`);
  const sandboxMode = (str('RUNTIME_SANDBOX') ?? 'strict') as SandboxMode;
  if (!['strict', 'weak'].includes(sandboxMode)) problems.push(`RUNTIME_SANDBOX must be strict or weak (got '${sandboxMode}')`);
  const logLevel = (str('LOG_LEVEL') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const logFormat = (str('LOG_FORMAT') ?? 'json') as LogFormat;
  if (!LOG_FORMATS.includes(logFormat)) problems.push(`LOG_FORMAT must be one of ${LOG_FORMATS.join(', ')} (got '${logFormat}')`);

  // 64 so that one tenant alone still has the 32 lanes in flight it was measured with (its cap is half).
  const laneConcurrency = int('LANE_CONCURRENCY', 64, 1, 256);
  const config: AppConfig = {
    port: int('PORT', 3000, 0, 65535),
    host: str('HOST') ?? '0.0.0.0',
    dataDir: path.resolve(str('DATA_DIR') ?? './data'),
    databaseUrl,
    lanePoolSize: int('LANE_POOL_SIZE', 4, 1, 64),
    redisUrl,
    adminToken,
    bootstrapApiKey,
    bootstrapTenantName: str('BOOTSTRAP_TENANT_NAME') ?? 'bootstrap',
    firstRunTenant: str('FIRST_RUN_TENANT') === undefined || bool('FIRST_RUN_TENANT'),
    logLevel,
    logFormat,
    tenantImportMaxBytes: int('TENANT_IMPORT_MAX_BYTES', 4 * 1024 ** 3, 1024, Number.MAX_SAFE_INTEGER),
    apiKeyCacheMs: int('API_KEY_CACHE_MS', 0, 0, 3_600_000),
    shutdownGraceMs: int('SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    metrics: { enabled: str('METRICS_ENABLED') === undefined || bool('METRICS_ENABLED'), token: metricsToken },
    idempotency: {
      keepMs: int('IDEMPOTENCY_KEYS_KEEP_MS', 86_400_000, 1_000, 30 * 86_400_000),
      sweepMs: int('IDEMPOTENCY_KEYS_SWEEP_MS', 60_000, 50, 86_400_000),
      killAfterCommitKey: str('TEST_KILL_AFTER_COMMIT_KEY'),
    },
    appendTurns: {
      inFlightPerTenant: int('APPEND_IN_FLIGHT_PER_TENANT', 4, 0, 100_000),
      queuedPerTenant: int('APPEND_QUEUED_PER_TENANT', 1_000, 0, 1_000_000),
      contentionWindowMs: int('APPEND_TURNS_WINDOW_MS', 1_000, 1, 3_600_000),
    },
    http: {
      requestTimeoutMs: int('REQUEST_TIMEOUT_MS', 30_000, 1_000, 3_600_000),
      connectionTimeoutMs: int('CONNECTION_TIMEOUT_MS', 60_000, 1_000, 3_600_000),
      headersTimeoutMs: int('HEADERS_TIMEOUT_MS', 10_000, 100, 3_600_000),
      bodyReadTimeoutMs: int('BODY_READ_TIMEOUT_MS', 10_000, 100, 3_600_000),
      refusedBodyLinger: {
        ms: int('REFUSED_BODY_LINGER_MS', 5_000, 0, 60_000),
        bytes: int('REFUSED_BODY_LINGER_BYTES', 16 * 1024 * 1024, 0, 1024 ** 3),
      },
    },
    lanes: {
      concurrency: laneConcurrency,
      // Half by default: one tenant's backlog leaves the other half of the slots to everyone else.
      maxInFlightPerTenant: int('LANE_MAX_IN_FLIGHT_PER_TENANT', Math.ceil(laneConcurrency / 2), 1, 10_000),
      backoffMs: msList('LANE_RETRY_BACKOFF_MS', '100,500,2000'),
      sweepMs: int('LANE_SWEEP_MS', 2_000, 50, 600_000),
      // BullMQ: a lane run's lease in the store, renewed every third of it while the run lasts, and
      // the job lock. What a crashed instance's running lanes wait at most before another takes them.
      leaseMs: int('LANE_LEASE_MS', 3_000, 300, 600_000),
      readWaitMs: int('PROJECTION_READ_WAIT_MS', 5_000, 0, 60_000),
    },
    dryRun: dryRunSettings(int),
    runtime: {
      dir: str('RUNTIME_DIR'),
      isolation,
      execHosts: int('RUNTIME_EXEC_HOSTS', defaultExecHosts(isolation), 1, 1000),
      execIdleMs: int('RUNTIME_EXEC_IDLE_MS', 300_000, 1_000, 86_400_000),
      execAssemblyBudget: int('RUNTIME_EXEC_ASSEMBLY_BUDGET', 1_000, 1, 1_000_000),
      execAssemblyBudgetBytes: int('RUNTIME_EXEC_ASSEMBLY_BUDGET_BYTES', 256 * 1024 * 1024, 64 * 1024, 64 * 1024 * 1024 * 1024),
      execTenantCalls: int('RUNTIME_EXEC_TENANT_CALLS', 8, 1, 1_000),
      quarantineMs: int('RUNTIME_QUARANTINE_MS', 60_000, 100, 86_400_000),
      quarantineMaxMs: int('RUNTIME_QUARANTINE_MAX_MS', 3_600_000, 100, 7 * 86_400_000),
      execStallMs: int('RUNTIME_EXEC_STALL_MS', 500, 0, 600_000),
      callDeadlineMs: int('RUNTIME_CALL_DEADLINE_MS', 5_000, 100, 600_000),
      compileDeadlineMs: int('RUNTIME_COMPILE_DEADLINE_MS', 15_000, 1_000, 3_600_000),
      compilerHosts: int('RUNTIME_COMPILER_HOSTS', 2, 1, 64),
      uploadPendingMaxPerTenant: int('UPLOAD_PENDING_MAX_PER_TENANT', 10, 1, 100_000),
      execHeapMb,
      // 32 MiB, or an eighth of a smaller heap: no tenant's statics may leave its neighbours without room.
      tenantMemoryMb: int('RUNTIME_TENANT_MEMORY_MB', Math.min(32, Math.floor(execHeapMb / 8)), 1, 65_536),
      unavailableWaitMs: int('RUNTIME_UNAVAILABLE_WAIT_MS', 5_000, 0, 600_000),
      compileHeapMb: int('RUNTIME_COMPILE_HEAP_MB', 1024, 128, 65_536),
      sandbox: {
        mode: sandboxMode,
        // Not 0: the point is to leave root.
        uid: int('RUNTIME_SANDBOX_UID', 61000, 1, 4_294_967_294),
        gid: int('RUNTIME_SANDBOX_GID', 61000, 1, 4_294_967_294),
        bwrap: str('RUNTIME_SANDBOX_BWRAP') ?? 'bwrap',
      },
      // Past 16 MiB a few states would fill the 64 MiB line the service reads from a host.
      maxStateBytes: int('STATE_MAX_BYTES', 1024 * 1024, 1024, 16 * 1024 * 1024),
    },
    notifications: {
      keepCount: int('NOTIFICATIONS_KEEP_COUNT', 100_000, 0, 1_000_000_000),
      keepMs: int('NOTIFICATIONS_KEEP_MS', 7 * 86_400_000, 0, 3650 * 86_400_000),
      retentionSweepMs: int('NOTIFICATIONS_RETENTION_SWEEP_MS', 60_000, 50, 86_400_000),
      pageDefault: 100,
      pageMax: 1_000,
      pingMs: int('STREAM_PING_MS', 30_000, 50, 3_600_000),
      pollMs: int('STREAM_POLL_MS', 1_000, 50, 3_600_000),
      sseHeartbeatMs: int('SSE_HEARTBEAT_MS', 15_000, 50, 3_600_000),
      maxBufferedBytes: int('STREAM_MAX_BUFFERED_BYTES', 4 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
      maxStreamsPerKey: int('STREAM_MAX_PER_KEY', 100, 1, 1_000_000),
      maxStreamsPerInstance: int('STREAM_MAX_PER_INSTANCE', 10_000, 1, 1_000_000),
    },
    webhooks: {
      // 1 s, 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h: then dead-lettered (about 8 h in all).
      backoffMs: msList('WEBHOOK_RETRY_BACKOFF_MS', '1000,5000,30000,120000,600000,1800000,3600000,7200000,14400000'),
      timeoutMs: int('WEBHOOK_TIMEOUT_MS', 10_000, 50, 600_000),
      pollMs: int('WEBHOOK_POLL_MS', 1_000, 10, 600_000),
      repairMs: int('WEBHOOK_REPAIR_MS', 10_000, 50, 3_600_000),
      concurrency: int('WEBHOOK_CONCURRENCY', 64, 1, 1024),
      allowPrivate: bool('WEBHOOK_ALLOW_PRIVATE_URLS'),
      secretOverlapMs: int('WEBHOOK_SECRET_OVERLAP_MS', 86_400_000, 0, 30 * 86_400_000),
      secretsKey: str('WEBHOOK_SECRETS_KEY'),
      deadKeepMs: int('WEBHOOK_DEAD_KEEP_MS', 7 * 86_400_000, 0, 3650 * 86_400_000),
    },
    quotas: {
      // About a fifth of what one 2-core instance appends (~10k single appends/s, ~130k events/s in
      // batches), with a 10 s burst: one tenant cannot take an instance, an ordinary client never meets it.
      defaults: {
        appendRequests: rate('QUOTA_APPEND_REQUESTS', '20000/10s'),
        appendEvents: rate('QUOTA_APPEND_EVENTS', '200000/10s'),
        // A compile costs 0.2-1.5 s of a shared compiler: one a minute on average, a burst of 60.
        uploads: rate('QUOTA_UPLOADS', '60/1h'),
        streams: int('QUOTA_STREAMS', 500, 0, 1_000_000),
        webhooksInFlight: int('QUOTA_WEBHOOKS_IN_FLIGHT', 16, 0, 100_000),
        storedEvents: int('QUOTA_STORED_EVENTS', 0, 0, Number.MAX_SAFE_INTEGER),
        // Bounds on what a tenant's code makes the service keep (issue 15): projections, one
        // projection's lane rows, one webhook endpoint's undelivered backlog.
        projections: int('QUOTA_PROJECTIONS', 100, 0, 1_000_000),
        keysPerProjection: int('QUOTA_KEYS_PER_PROJECTION', 100_000, 0, 1_000_000_000),
        pendingDeliveries: int('QUOTA_PENDING_DELIVERIES', 10_000, 0, 1_000_000_000),
        // Each event webhook is one claimed delivery loop and one due-poll row: a handful per tenant is what connectors need.
        eventWebhooks: int('QUOTA_EVENT_WEBHOOKS', 10, 0, 1_000_000),
      },
      overridesCacheMs: int('QUOTA_OVERRIDES_CACHE_MS', 5_000, 0, 3_600_000),
      refusalDelayMs: int('QUOTA_REFUSAL_DELAY_MS', 500, 0, 10_000),
    },
  };
  // Node answers a request past REQUEST_TIMEOUT_MS itself (a bare 408), so the finer deadlines must come first.
  const { requestTimeoutMs, headersTimeoutMs, bodyReadTimeoutMs } = config.http;
  if (headersTimeoutMs > requestTimeoutMs)
    problems.push(`HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not exceed REQUEST_TIMEOUT_MS (${requestTimeoutMs})`);
  if (bodyReadTimeoutMs > requestTimeoutMs)
    problems.push(`BODY_READ_TIMEOUT_MS (${bodyReadTimeoutMs}) must not exceed REQUEST_TIMEOUT_MS (${requestTimeoutMs})`);
  if (config.runtime.quarantineMaxMs < config.runtime.quarantineMs) {
    problems.push(
      `RUNTIME_QUARANTINE_MAX_MS (${config.runtime.quarantineMaxMs}) must not be less than RUNTIME_QUARANTINE_MS (${config.runtime.quarantineMs})`,
    );
  }
  // A cap of half the heap or more would let one tenant's statics leave no room for its neighbours' calls.
  if (config.runtime.tenantMemoryMb * 2 > config.runtime.execHeapMb) {
    problems.push(
      `RUNTIME_TENANT_MEMORY_MB (${config.runtime.tenantMemoryMb}) must be at most half of RUNTIME_EXEC_HEAP_MB (${config.runtime.execHeapMb})`,
    );
  }
  if (config.notifications.maxStreamsPerKey > config.notifications.maxStreamsPerInstance) {
    problems.push('STREAM_MAX_PER_KEY must not exceed STREAM_MAX_PER_INSTANCE');
  }
  if (problems.length) throw new ConfigError(problems);
  return config;
}
