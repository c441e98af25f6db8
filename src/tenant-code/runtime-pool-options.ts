import { defaultExecHosts, Isolation } from '../config/isolation-settings';
import { AssemblyBudgetOptions } from './executors/assembly-budget';
import { QuarantineOptions } from './executors/tenant-placement';
import { DEFAULT_MAX_KEY_LENGTH, DEFAULT_MAX_RESULT_BYTES, DEFAULT_MAX_STATE_BYTES } from './host/runtime-protocol';

/** RuntimePool's settings (TenantCodeModule reads them from RUNTIME_*). */
export interface RuntimePoolOptions {
  isolation: Isolation;
  /**
   * shared: the executor processes (fixed); tenant: executor processes alive at once (the least
   * recently used idle one is stopped past it).
   */
  execHosts: number;
  /** An executor idle this long is stopped (it starts again on the next call). */
  execIdleMs: number;
  /** Per executor: assemblies loaded at once and their DLL bytes; past either, the least recently used is unloaded. */
  assemblyBudget: AssemblyBudgetOptions;
  /** shared: a tenant whose call killed or hung an executor runs apart this long (doubling on each repeat, up to maxMs). */
  quarantine: QuarantineOptions;
  /**
   * shared: a call running this long in a shared executor while other tenants' calls wait behind it
   * gets the process replaced at once (the waiting calls run on the new one; the slow call runs
   * again in its tenant's quarantine executor); 0: only at the deadline.
   */
  stallMs: number;
  /** Calls of one tenant sent to an executor and unanswered at once (the rest wait, other tenants' calls go first). */
  tenantCallsInFlight: number;
  /** Calls carried by one batch request to an executor. */
  itemsPerRequest: number;
  /** Compiler hosts, each compiling one archive at a time: one slow compile holds up only its own. */
  compilerHosts: number;
  callDeadlineMs: number;
  compileDeadlineMs: number;
  readyTimeoutMs: number;
  maxLineBytes: number;
  /** A state whose JSON is longer fails its event with STATE_TOO_LARGE, in the host, before it is written. */
  maxStateBytes: number;
  /** A key from ResolveKey that is longer gets KEY_TOO_LONG, in the host, instead of being written. */
  maxKeyLength: number;
  /** An apply response stops growing about here: groups past it come back truncated (never empty). */
  maxResultBytes: number;
  /** What one tenant's assemblies may hold in one executor (image, statics, runners); past it TENANT_MEMORY_EXCEEDED, an offence. */
  tenantMemoryBytes: number;
  /** An executor's heap limit (RUNTIME_EXEC_HEAP_MB): the measure of whose memory killed it (Executor). */
  execHeapBytes: number;
}

export const DEFAULT_POOL_OPTIONS: RuntimePoolOptions = {
  isolation: 'shared',
  execHosts: defaultExecHosts('shared'),
  execIdleMs: 5 * 60_000,
  assemblyBudget: { maxCount: 1_000, maxBytes: 256 * 1024 * 1024 },
  quarantine: { baseMs: 60_000, maxMs: 3_600_000 },
  stallMs: 500,
  tenantCallsInFlight: 8,
  itemsPerRequest: 64,
  compilerHosts: 2,
  callDeadlineMs: 5_000,
  compileDeadlineMs: 15_000,
  readyTimeoutMs: 30_000,
  maxLineBytes: 64 * 1024 * 1024,
  maxStateBytes: DEFAULT_MAX_STATE_BYTES,
  maxKeyLength: DEFAULT_MAX_KEY_LENGTH,
  maxResultBytes: DEFAULT_MAX_RESULT_BYTES,
  tenantMemoryBytes: 32 * 1024 * 1024,
  execHeapBytes: 256 * 1024 * 1024,
};
