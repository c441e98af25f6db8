import type { RawJson } from '../../common/raw-json';

/**
 * The stdio protocol of the .NET runtime host, as TypeScript types. The single source of truth is
 * runtime/protocol.json; runtime-protocol.spec.ts checks these names against it.
 */
export const PROTOCOL_VERSION = 2;

/** The host's defaults for apply.maxStateBytes and resolveKeys.maxKeyLength (the service always sends both). */
export const DEFAULT_MAX_STATE_BYTES = 1024 * 1024;
/**
 * What one apply response may grow to before its groups stop early (truncated): a lane run of 200
 * events with 1 MiB states would otherwise be 200 MiB for the event loop to parse.
 */
export const DEFAULT_MAX_RESULT_BYTES = 8 * 1024 * 1024;
/** Also the longest state key a lane may have (keys go into URLs and text columns). */
export const DEFAULT_MAX_KEY_LENGTH = 1024;

export type HostMode = 'compile' | 'exec' | 'all';

/**
 * JSON going into the host travels as RawJson (written verbatim by stringifyJson), JSON coming back
 * as strings of JSON text: no number ever passes through a JavaScript double on its way.
 */

export interface WireEvent {
  eventId: string;
  aggregateId: string;
  aggregateType: string;
  eventType: string;
  version: number;
  timestamp: string;
  data: RawJson;
  metadata: RawJson | null;
  correlationId: string | null;
  causationId: string | null;
  /** The event's tags (docs/dcb.md), only when it has some: the host reads absent as none (Event.Tags empty). */
  tags?: string[];
}

export interface Discovered {
  className: string;
  stateTypeName: string;
  kind: 'reducer' | 'projection';
  aggregateType?: string;
  projectionName?: string;
}

export interface Diagnostic {
  path: string | null;
  line: number;
  column: number;
  severity: 'error' | 'warning';
  id: string;
  message: string;
  /** Also appended to message in brackets (earlier readers). */
  hint?: string;
}

export type CompileResult =
  | { ok: true; discovered: Discovered[]; assembly: string; assemblySha256: string; warnings: string[]; diagnostics: Diagnostic[] }
  | { ok: false; compilationError: string; diagnostics: Diagnostic[]; warnings: string[] };

/** Per-group / per-event error codes inside apply and resolveKeys results. */
export const ITEM_ERROR_CODES = [
  'APPLY_FAILED',
  'RESOLVE_FAILED',
  'INVALID_EVENT',
  'STATE_DESERIALIZATION_FAILED',
  'STATE_SERIALIZATION_FAILED',
  // The host's own limits, checked before it writes the state or key (apply.maxStateBytes, resolveKeys.maxKeyLength).
  'STATE_TOO_LARGE',
  'KEY_TOO_LONG',
] as const;

export interface ItemError {
  code: (typeof ITEM_ERROR_CODES)[number];
  message: string;
  exceptionType?: string;
  /** The whole stack, host frames included: for logs only, never shown to a tenant (frames is). */
  stackTrace?: string;
  /** With exceptionType: the tenant's own frames, innermost first. */
  frames?: { method: string; file: string | null; line: number | null }[];
  /** STATE_TOO_LARGE, KEY_TOO_LONG: the limit exceeded. */
  limit?: number;
}

export interface ApplyGroupPayload {
  /** The state before the events (null: the reducer's `new TState()`). */
  state: RawJson | null;
  events: WireEvent[];
  /** Only the state after the last applied event comes back (every state is still size-checked). */
  lastStateOnly?: boolean;
  /** The lane's state key (projections): an IResolveKeys projection is applied with it; others ignore it. */
  key?: string;
}

export type ApplyGroupResult =
  /**
   * truncated: the response reached maxResultBytes; only the first states.length events were applied.
   * A state is the text `null` where an IDeletableProjection removed its key's state (REMOVED_STATE).
   */
  { ok: true; states: string[]; truncated?: true } | { ok: false; failedIndex: number; states: string[]; error: ItemError };

/** One event's key: one (ResolveKey), several (IResolveKeys: an array, maybe empty), none (null), or why not. */
export type ResolvedKey = string | string[] | null | { error: ItemError };

export interface ApplyRequest {
  assemblyId: string;
  className: string;
  groups: ApplyGroupPayload[];
  maxStateBytes?: number;
  maxResultBytes?: number;
}

export interface ResolveKeysRequest {
  assemblyId: string;
  className: string;
  events: WireEvent[];
  maxKeyLength?: number;
}

/** One call inside a batch: op plus that request type's payload. */
export type BatchItem = ({ op: 'apply' } & ApplyRequest) | ({ op: 'resolveKeys' } & ResolveKeysRequest);

/** What a batch item's line carries as its result, by op. */
export interface BatchItemResults {
  apply: { results: ApplyGroupResult[] };
  resolveKeys: { keys: ResolvedKey[] };
}

/** Request type → [payload, result]. */
export interface HostRequests {
  compile: [{ files: { path: string; content: string }[]; kind?: 'reducer' | 'projection'; assemblyName?: string }, CompileResult];
  /** tenantId: whose assembly it is (its memory is charged to it; the host clears its shared array pools when calls switch tenant). */
  load: [
    { assemblyId: string; assembly: string; tenantId?: string; tenantMemoryBytes?: number },
    { ok: true; alreadyLoaded: boolean; chargedBytes: number; tenantBytes: number },
  ];
  unload: [{ assemblyId: string }, { ok: true; wasLoaded: boolean }];
  apply: [ApplyRequest, { results: ApplyGroupResult[] }];
  resolveKeys: [ResolveKeysRequest, { keys: ResolvedKey[] }];
  /** Answered item by item (HostProcess.callItems), then { items }. */
  batch: [{ items: BatchItem[] }, { items: number }];
  ping: [Record<string, never>, { pong: true }];
  stats: [{ collect?: boolean }, { loadedAssemblies: number; gcHeapBytes: number; workingSetBytes: number; [k: string]: unknown }];
}

export type HostRequestType = keyof HostRequests;
export const HOST_REQUEST_TYPES: HostRequestType[] = ['compile', 'load', 'unload', 'apply', 'resolveKeys', 'batch', 'ping', 'stats'];

/** Codes the host answers in an error envelope. */
export type HostErrorCode =
  | 'BAD_REQUEST'
  | 'UNKNOWN_TYPE'
  | 'UNSUPPORTED_IN_MODE'
  | 'ASSEMBLY_NOT_LOADED'
  | 'ALREADY_LOADED'
  | 'VERIFY_FAILED'
  | 'LOAD_FAILED'
  | 'CLASS_NOT_FOUND'
  | 'NOT_A_PROJECTION'
  | 'INTERNAL'
  /** The tenant would hold more than its cap in the executor (a load, or preparing a runner): an offence of that tenant. */
  | 'TENANT_MEMORY_EXCEEDED'
  /** The call ran out of memory held by others' loaded code: not its failure (it runs again; the holder is blamed). */
  | 'HOST_MEMORY_EXHAUSTED';

/** The host error codes (runtime-protocol.spec.ts checks them against runtime/protocol.json). */
export const HOST_ERROR_CODES: HostErrorCode[] = [
  'BAD_REQUEST',
  'UNKNOWN_TYPE',
  'UNSUPPORTED_IN_MODE',
  'ASSEMBLY_NOT_LOADED',
  'ALREADY_LOADED',
  'VERIFY_FAILED',
  'LOAD_FAILED',
  'CLASS_NOT_FOUND',
  'NOT_A_PROJECTION',
  'INTERNAL',
  'TENANT_MEMORY_EXCEEDED',
  'HOST_MEMORY_EXHAUSTED',
];
