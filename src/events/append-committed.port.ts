/**
 * Told after each acknowledged append. AppendPipeline calls it; LanesModule binds it to LaneEngine,
 * which wakes the tenant's router (live latency without polling).
 */
export interface AppendCommitted {
  appended(tenantId: string, position: number): void;
}

export const APPEND_COMMITTED = Symbol('APPEND_COMMITTED');
