import { ApplyGroupPayload, ApplyGroupResult, ResolvedKey, WireEvent } from './host/runtime-protocol';

/**
 * The tenants' compiled code, run where it runs: what the reducers and the lanes call. One adapter,
 * RuntimePool (the shared or per-tenant executors; TenantCodeModule binds it). Callers: ReducerRunner
 * and LaneRunner (apply, through CoalescingApplier), TenantRouter and LaneRunner (resolveKeys),
 * LaneEngine (apply, resolveKeys; unload when a version is retired).
 */
export abstract class TenantCode {
  /**
   * Folds each group's events onto its state with the tenant's reducer or projection `className`.
   * `urgent`: a request waits for it (a reducer on an append): it goes before the tenant's background calls.
   */
  abstract apply(
    tenantId: string,
    assemblyId: string,
    className: string,
    groups: ApplyGroupPayload[],
    deadlineMs?: number,
    urgent?: boolean,
  ): Promise<ApplyGroupResult[]>;

  /** The projection `className`'s state key of each event (or its refusal), in order. */
  abstract resolveKeys(
    tenantId: string,
    assemblyId: string,
    className: string,
    events: WireEvent[],
    deadlineMs?: number,
  ): Promise<ResolvedKey[]>;

  /** Drops a compiled upload wherever it is loaded (a redeploy, a delete). */
  abstract unload(tenantId: string, assemblyId: string): Promise<void>;
}
