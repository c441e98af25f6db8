import * as os from 'node:os';

/** `shared`: a fixed pool of executors, each running many tenants' assemblies; `tenant`: one executor per tenant. */
export type Isolation = 'shared' | 'tenant';
export const ISOLATIONS: Isolation[] = ['shared', 'tenant'];

/**
 * shared: one executor per core (at least 2): each runs one call at a time, so more would only
 * compete for the cores; tenant: executors alive at once, as many tenants as can be served without
 * stopping one (each costs a process).
 */
export const defaultExecHosts = (isolation: Isolation): number => (isolation === 'tenant' ? 8 : Math.max(2, os.availableParallelism()));
