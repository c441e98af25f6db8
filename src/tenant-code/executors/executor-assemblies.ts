import { createHash } from 'node:crypto';
import { AssemblyBudget, AssemblyBudgetOptions, BudgetEntry } from './assembly-budget';
import { HostCallError, HostFailure, HostProcess } from '../host/host-process';

/** Gives a host the bytes of a tenant's compiled upload when it needs to (re)load it. */
export type AssemblySource = (tenantId: string, assemblyId: string) => Promise<Buffer>;

/** One tenant upload as one executor knows it. */
export interface TenantAssembly extends BudgetEntry {
  tenantId: string;
  assemblyId: string;
  /** The id in the host: the tenant's id qualified by the tenant, so two tenants' ids never meet. */
  hostId: string;
  image?: Buffer;
  fetchError?: unknown;
  /** The host generation it is loaded in, and that load request. */
  loadedIn?: number;
  loading?: Promise<void>;
  /** The upload went away while calls still needed it: unloaded once they are answered. */
  dropWhenUnused?: boolean;
  /** What the host charged its tenant for it at its last load (image and type initialisers' allocations). */
  chargedBytes?: number;
  /** Its last load killed or hung the host (its type initialisers run at load): the calls waiting for it fail with this. */
  killedBy?: HostCallError;
}

export interface ExecutorAssembliesOptions {
  source: AssemblySource;
  budget: AssemblyBudgetOptions;
  requestDeadlineMs: number;
  /** What one tenant's assemblies may be charged in one executor (the host refuses a load past it: TENANT_MEMORY_EXCEEDED). */
  tenantMemoryBytes: number;
  /** An image arrived (or failed to): calls waiting for it may go. */
  fetched: () => void;
  /** The host died or hung loading a tenant's assembly (the load was what it was running). */
  loadKilledHost: (host: HostProcess, tenantId: string, failure: HostFailure) => void;
  /** A load was refused for the tenant's memory (its offence: the tenant is to be moved apart). */
  memoryExceeded: (tenantId: string, assemblyId: string, error: HostCallError) => void;
}

const DEATHS: ReadonlySet<HostFailure> = new Set(['TIMEOUT', 'CRASHED', 'PROTOCOL']);

/**
 * The tenant assemblies of one executor: fetched from the store when a call first needs them
 * (pinned while calls wait for them), loaded into the running host ahead of the request that uses
 * them, unloaded least recently used first past the budget, and forgotten when the host goes (its
 * replacement loads again on demand). Entries exist only while pinned or loaded.
 */
export class ExecutorAssemblies {
  readonly counters = { loads: 0, unloads: 0 };
  private readonly entries = new Map<string, TenantAssembly>();
  private budget: AssemblyBudget<TenantAssembly>;
  private host?: HostProcess;
  private generation = 0;
  private lastCharges?: { host: HostProcess; total: number; holder?: { tenantId: string; bytes: number } };

  constructor(private readonly options: ExecutorAssembliesOptions) {
    this.budget = new AssemblyBudget(options.budget);
  }

  /** Host ids of the assemblies loaded in the running host. */
  get loaded(): string[] {
    return [...this.budget.values()].map((a) => a.hostId);
  }

  /** A new host runs: nothing is loaded in it yet. */
  attach(host: HostProcess): void {
    this.detach();
    this.host = host;
  }

  /** The host is gone: what it had loaded is gone with it; images still needed are kept for the next one. */
  detach(): void {
    // What it was charged, for the blame of its death (read after this, when the exit is seen first).
    if (this.host) this.lastCharges = { host: this.host, total: this.chargedBytes, holder: this.largestHolder() };
    this.host = undefined;
    this.generation++;
    this.budget = new AssemblyBudget(this.options.budget);
    for (const a of this.entries.values()) {
      a.loadedIn = undefined;
      a.loading = undefined;
      if (a.pins === 0) this.entries.delete(a.key);
    }
  }

  get(tenantId: string, assemblyId: string): TenantAssembly | undefined {
    return this.entries.get(keyOf(tenantId, assemblyId));
  }

  /** A call needs it: kept (and fetched, the first time) until `unpin`. */
  pin(tenantId: string, assemblyId: string): TenantAssembly {
    const key = keyOf(tenantId, assemblyId);
    let a = this.entries.get(key);
    if (!a) {
      a = { key, tenantId, assemblyId, hostId: hostIdOf(tenantId, assemblyId), bytes: 0, pins: 0 };
      this.entries.set(key, a);
      this.fetch(a);
    }
    a.pins++;
    a.dropWhenUnused = false;
    return a;
  }

  unpin(a: TenantAssembly | undefined): void {
    if (!a) return;
    a.pins--;
    if (a.pins > 0) return;
    if (a.dropWhenUnused) this.unload(a);
    // Not loaded: nothing to keep (fetched again when needed). A failed fetch goes with its last waiting call.
    else if (a.loadedIn !== this.generation) this.entries.delete(a.key);
  }

  /** A call for it can go: its image is here (or failed to come), or it is loaded already. */
  ready(a: TenantAssembly | undefined): boolean {
    return !!a && (a.fetchError !== undefined || a.image !== undefined || a.loadedIn === this.generation);
  }

  /** Makes sure the running host has it before the request about to be written: loads it (making room), or marks it used. */
  prepare(a: TenantAssembly): void {
    const host = this.host;
    if (!host) return;
    if (a.loadedIn === this.generation) return this.budget.touch(a);
    for (const victim of this.budget.victims(a.bytes, a)) this.unload(victim);
    const generation = this.generation;
    a.loadedIn = generation;
    a.killedBy = undefined;
    this.budget.add(a);
    this.counters.loads++;
    const payload = {
      assemblyId: a.hostId,
      assembly: a.image!.toString('base64'),
      // Whose it is: the host charges its memory to that tenant, and clears the process-wide array pools
      // between two tenants' calls.
      tenantId: hostTenantOf(a.tenantId),
      tenantMemoryBytes: this.options.tenantMemoryBytes,
    };
    a.loading = host.call('load', payload, this.options.requestDeadlineMs).then(
      (r) => {
        if (a.loadedIn !== generation) return;
        // What its statics hold counts in the budget too, so that the least recently used make room for it.
        a.chargedBytes = r.chargedBytes;
        this.budget.remove(a.key);
        a.bytes = Math.max(a.image?.length ?? 0, r.chargedBytes ?? 0);
        this.budget.add(a);
      },
      (e) => {
        if (a.loadedIn === generation) {
          a.loadedIn = undefined;
          this.budget.remove(a.key);
        }
        if (e instanceof HostCallError && e.position.running && DEATHS.has(e.failure)) {
          a.killedBy = e;
          this.options.loadKilledHost(host, a.tenantId, e.failure);
        } else if (e instanceof HostCallError && e.failure === 'TENANT_MEMORY_EXCEEDED')
          this.options.memoryExceeded(a.tenantId, a.assemblyId, e);
        throw e;
      },
    );
    a.loading.catch(() => undefined);
  }

  /** The tenant whose loaded assemblies the running host charged the most, and how much (undefined: none charged). */
  largestHolder(): { tenantId: string; bytes: number } | undefined {
    const byTenant = new Map<string, number>();
    for (const a of this.budget.values()) if (a.chargedBytes) byTenant.set(a.tenantId, (byTenant.get(a.tenantId) ?? 0) + a.chargedBytes);
    let top: { tenantId: string; bytes: number } | undefined;
    for (const [tenantId, bytes] of byTenant) if (!top || bytes > top.bytes) top = { tenantId, bytes };
    return top;
  }

  /** What `host` (the running one, or the one just detached) was charged in all, and its largest holder. */
  chargesOf(host: HostProcess): { total: number; holder?: { tenantId: string; bytes: number } } | undefined {
    if (host === this.host) return { total: this.chargedBytes, holder: this.largestHolder() };
    return this.lastCharges?.host === host ? this.lastCharges : undefined;
  }

  /** What the running host charged for every assembly loaded in it. */
  get chargedBytes(): number {
    let sum = 0;
    for (const a of this.budget.values()) sum += a.chargedBytes ?? 0;
    return sum;
  }

  /** Every upload of the tenant here (its memory is to be given back): unloaded now, or once the calls that need them are answered. */
  forgetTenant(tenantId: string): void {
    for (const a of [...this.entries.values()]) if (a.tenantId === tenantId) this.forget(a.tenantId, a.assemblyId);
  }

  /** The upload is gone (a redeploy, a delete): unloaded now, or once the calls that need it are answered. */
  forget(tenantId: string, assemblyId: string): void {
    const a = this.get(tenantId, assemblyId);
    if (!a) return;
    if (a.pins > 0) a.dropWhenUnused = true;
    else this.unload(a);
  }

  private unload(a: TenantAssembly): void {
    const loaded = a.loadedIn === this.generation;
    this.budget.remove(a.key);
    a.loadedIn = undefined;
    a.dropWhenUnused = false;
    if (a.pins === 0) this.entries.delete(a.key);
    if (loaded && this.host?.alive) {
      this.counters.unloads++;
      this.host.call('unload', { assemblyId: a.hostId }, this.options.requestDeadlineMs).catch(() => undefined);
    }
  }

  private fetch(a: TenantAssembly): void {
    Promise.resolve()
      .then(() => this.options.source(a.tenantId, a.assemblyId))
      .then(
        (image) => {
          a.image = image;
          a.bytes = image.length;
          this.options.fetched();
        },
        (e) => {
          a.fetchError = e;
          this.options.fetched();
        },
      );
  }
}

const keyOf = (tenantId: string, assemblyId: string) => `${tenantId}\u0000${assemblyId}`;

/** Unique per tenant and upload, within the host's 200 characters. */
function hostIdOf(tenantId: string, assemblyId: string): string {
  const plain = `${tenantId}/${assemblyId}`;
  return plain.length <= 200 ? plain : `h/${createHash('sha256').update(tenantId).update('\u0000').update(assemblyId).digest('hex')}`;
}

/** The tenant as the host knows it (runtime/protocol.json load.tenant: 1..200 characters), one per tenant. */
function hostTenantOf(tenantId: string): string {
  return tenantId.length > 0 && tenantId.length <= 200 ? tenantId : `h/${createHash('sha256').update(tenantId).digest('hex')}`;
}
