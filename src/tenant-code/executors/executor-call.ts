import { AssemblyBudgetOptions } from './assembly-budget';
import { AssemblySource } from './executor-assemblies';
import { HostCallError, HostFailure, HostProcess } from '../host/host-process';
import { BatchItem } from '../host/runtime-protocol';

// What an Executor is given (its options), holds (its calls) and tells its pool (ExecutorListener).

/** One apply/resolveKeys call of a tenant, waiting for or sent to an executor. */
export interface ExecutorCall {
  tenantId: string;
  /** The tenant's own id of the upload (several tenants may use the same one). */
  assemblyId: string;
  /** What the host is asked; its assemblyId is replaced by the executor's own, tenant-qualified one. */
  item: BatchItem;
  deadlineMs: number;
  /** A request waits for it (a reducer on an append): it goes before its tenant's background calls. */
  urgent?: boolean;
  resolve: (result: any) => void;
  reject: (e: unknown) => void;
  /** Times it was sent to an executor that died running another call before reaching it. */
  reruns: number;
  settled?: boolean;
  /**
   * It ran past the stall threshold in a shared executor while other tenants' calls waited: its
   * executor was replaced, and it runs again where its (now quarantined) tenant goes. Its tenant
   * was counted an offender then; its failing there is not counted again.
   */
  stalled?: boolean;
}

/** What an executor (`E`: Executor) tells the pool (RuntimePool) about its calls. */
export interface ExecutorListener<E> {
  /**
   * The executor died or hung running this tenant's call (or loading its assembly): the tenant is to
   * blame. `counted`: the call is one that stalled a shared executor, for which it was blamed already.
   */
  offended(executor: E, tenantId: string, failure: HostFailure, counted?: boolean): void;
  /**
   * This tenant's call ran `ms` in a shared executor while other tenants' calls waited behind it: the
   * executor is being replaced, and the call with the tenant's other calls comes back in `interrupted`
   * to run again where the tenant goes now (the tenant is to be moved apart).
   */
  stalled(executor: E, tenantId: string, ms: number): void;
  /**
   * Once per death, after `offended`: the calls sent but never run because another call killed the
   * executor, in their order (to run again), and the tenants blamed (whose queued calls may have to
   * follow them elsewhere, behind their interrupted ones).
   */
  interrupted(executor: E, calls: ExecutorCall[], offenders: string[]): void;
  /** A call is answered, either way. */
  settled(call: ExecutorCall): void;
  /** The tenant's upload was refused for the tenant's memory (TENANT_MEMORY_EXCEEDED), after `offended`. */
  refused(tenantId: string, assemblyId: string, error: HostCallError): void;
}

export interface ExecutorOptions {
  label: string;
  spawn: () => Promise<HostProcess>;
  assemblies: AssemblySource;
  budget: AssemblyBudgetOptions;
  /** Calls of one tenant sent and unanswered at once. */
  tenantCallsInFlight: number;
  /** Calls carried by one batch request. */
  itemsPerRequest: number;
  /** Batch requests written ahead of the host (2: the next one is in the pipe while the host runs the current one). */
  requestsInFlight: number;
  /** Deadline of load, unload and stats requests. */
  requestDeadlineMs: number;
  /** What one tenant's assemblies may hold in this executor (the host charges type initialisers and runners to it). */
  tenantMemoryBytes: number;
  /**
   * The host's heap limit: when it dies (or hangs) while the assemblies loaded in it were charged at
   * least half of this, the memory is taken for the cause, and its largest holder for the culprit.
   */
  heapBytes: number;
  /**
   * Shared executors: a call running this long while other tenants' calls wait behind it has its
   * process replaced at once (those calls run again on the new one) instead of at its deadline.
   * 0: never (executors of one tenant, quarantine executors).
   */
  stallMs: number;
}

export interface ExecutorCounters {
  requests: number;
  items: number;
  /** Requests that carried calls of two tenants or more. */
  sharedRequests: number;
  /** The most tenants one request carried. */
  maxTenantsInRequest: number;
  /** Host processes started (the first included). */
  starts: number;
}

/** One batch request carrying `calls` was sent. */
export function countRequest(counters: ExecutorCounters, calls: ExecutorCall[]): void {
  const tenants = new Set(calls.map((c) => c.tenantId)).size;
  counters.requests++;
  counters.items += calls.length;
  if (tenants > 1) counters.sharedRequests++;
  counters.maxTenantsInRequest = Math.max(counters.maxTenantsInRequest, tenants);
}
