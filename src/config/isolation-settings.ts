import * as os from 'node:os';

// The parsed RUNTIME_ISOLATION and RUNTIME_SANDBOX* settings: config/ owns their types, tenant-code/ reads them.

/** `shared`: a fixed pool of executors, each running many tenants' assemblies; `tenant`: one executor per tenant. */
export type Isolation = 'shared' | 'tenant';
export const ISOLATIONS: Isolation[] = ['shared', 'tenant'];

/**
 * shared: one executor per core (at least 2): each runs one call at a time, so more would only
 * compete for the cores; tenant: executors alive at once, as many tenants as can be served without
 * stopping one (each costs a process).
 */
export const defaultExecHosts = (isolation: Isolation): number => (isolation === 'tenant' ? 8 : Math.max(2, os.availableParallelism()));

export type SandboxMode = 'strict' | 'weak';

export interface SandboxOptions {
  /** strict: refuse to start without every fence; weak: run with what the machine has, and say so. */
  mode: SandboxMode;
  /** Who hosts run as when the service runs as root (no passwd entry needed). */
  uid: number;
  gid: number;
  /** The bubblewrap command (a name on PATH or a path). */
  bwrap: string;
}
