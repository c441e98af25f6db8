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
  assemblySha256: string | null;
  createdAt: number;
  compiledAt: number | null;
}

export interface UploadRepository {
  create(record: Omit<UploadRecord, 'status' | 'discovered' | 'compilationError' | 'assemblySha256' | 'compiledAt'>): Promise<void>;
  /** Tenant-scoped: another tenant's upload id reads as absent. */
  get(tenantId: string, uploadId: string): Promise<UploadRecord | null>;
  /** Tenants with uploads still to compile, the one waiting longest first (the compile queue's turns). */
  pendingTenants(): Promise<string[]>;
  /** A tenant's oldest upload still to compile. */
  oldestPending(tenantId: string): Promise<UploadRecord | null>;
  /** How many of a tenant's uploads are still to compile (the per-tenant cap); all tenants' without one (the compile queue's depth). */
  countPending(tenantId?: string): Promise<number>;
  markCompiled(
    tenantId: string,
    uploadId: string,
    r: { discovered: DiscoveredImplementation[]; assembly: Buffer; assemblySha256: string; at: number },
  ): Promise<void>;
  markFailed(tenantId: string, uploadId: string, r: { compilationError: string; at: number }): Promise<void>;
  /** The compiled DLL, for executors to load. */
  getAssembly(tenantId: string, uploadId: string): Promise<Buffer | null>;
}
