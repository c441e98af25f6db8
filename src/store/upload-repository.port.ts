import type { Diagnostic } from '../common/diagnostic';

export type UploadKind = 'reducer' | 'projection';
export type UploadStatus = 'pending' | 'compiled' | 'failed';

export interface DiscoveredImplementation {
  className: string;
  stateTypeName: string;
  kind: UploadKind;
  aggregateType?: string;
  projectionName?: string;
}

/** One uploaded archive of C# sources and what compiling it gave. */
export interface UploadRecord {
  uploadId: string;
  tenantId: string;
  kind: UploadKind;
  status: UploadStatus;
  /** The archive's .cs files, kept so a restart can compile what was pending. */
  sources: { path: string; content: string }[];
  /** Caller data kept with the upload (e.g. a projection's notification config). */
  meta: Record<string, unknown>;
  discovered: DiscoveredImplementation[] | null;
  compilationError: string | null;
  /** The compile's errors and warnings (null while pending, and for uploads compiled before they were kept). */
  diagnostics?: Diagnostic[] | null;
  assemblySha256: string | null;
  createdAt: number;
  compiledAt: number | null;
}

/**
 * Uploads and their compilation (store.uploads): the store is the compile queue. Adapter:
 * SqlUploadRepository (both stores). Who calls it: runtime/ (CompileQueue), reducers/ (ReducerCatalog,
 * AggregateBinder), projections/, the metrics scrape (countPending).
 */
export abstract class UploadRepository {
  abstract create(
    record: Omit<UploadRecord, 'status' | 'discovered' | 'compilationError' | 'assemblySha256' | 'compiledAt'>,
  ): Promise<void>;
  /** Tenant-scoped: another tenant's upload id reads as absent. */
  abstract get(tenantId: string, uploadId: string): Promise<UploadRecord | null>;
  /**
   * The tenant's uploads of `kind` in id order after `afterUploadId` (GET /reducers), without their
   * sources (`sources` is empty, `meta` as stored): a listing need not carry every archive's text.
   */
  abstract list(tenantId: string, kind: UploadKind, afterUploadId: string, limit: number): Promise<UploadRecord[]>;
  /**
   * Tenants with uploads still to compile, the one waiting longest first (the compile queue's turns);
   * with `now`, only those with an upload no live compile claim holds (one another instance could take).
   */
  abstract pendingTenants(now?: number): Promise<string[]>;
  /** A tenant's oldest upload still to compile. */
  abstract oldestPending(tenantId: string): Promise<UploadRecord | null>;
  /**
   * Claims the tenant's oldest upload still to compile that no live claim holds (none, or lapsed
   * before `now`) for `owner` until `until`: one guarded UPDATE, so of several instances claiming at
   * once exactly one gets each upload. Null when there is none to claim.
   */
  abstract claimOldest(tenantId: string, owner: string, now: number, until: number): Promise<UploadRecord | null>;
  /** Gives up `owner`'s claim on a pending upload (left for a later turn, on any instance). */
  abstract releaseClaim(tenantId: string, uploadId: string, owner: string): Promise<void>;
  /** How many of a tenant's uploads are still to compile (the per-tenant cap); all tenants' without one (the compile queue's depth). */
  abstract countPending(tenantId?: string): Promise<number>;
  /**
   * Records a compile. With `claim`, only while the upload is still pending under that owner's
   * claim (false, and nothing written, when another instance took it over after the claim lapsed).
   */
  abstract markCompiled(
    tenantId: string,
    uploadId: string,
    r: {
      discovered: DiscoveredImplementation[];
      assembly: Buffer;
      assemblySha256: string;
      at: number;
      claim?: string;
      diagnostics?: Diagnostic[];
    },
  ): Promise<boolean>;
  abstract markFailed(
    tenantId: string,
    uploadId: string,
    r: { compilationError: string; at: number; claim?: string; diagnostics?: Diagnostic[] },
  ): Promise<boolean>;
  /** The compiled DLL, for executors to load. */
  abstract getAssembly(tenantId: string, uploadId: string): Promise<Buffer | null>;
}
