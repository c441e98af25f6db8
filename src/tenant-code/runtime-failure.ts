import { arrayOf, integer, nullable, object, string } from '../common/json-schema';
import type { ItemError, WireEvent } from './host/runtime-protocol';

/** One of the tenant's own stack frames (the host leaves out its own, the SDK's and the framework's). */
export interface TenantFrame {
  method: string;
  /** The file's path in the uploaded archive (from the PDB embedded at compile time); null when unknown. */
  file: string | null;
  /** 1-based; null when unknown. */
  line: number | null;
}

/**
 * What a runtime failure of tenant code (Apply, ResolveKey) adds to its existing `code` and `message`:
 * the exception's type, the event it failed on and the tenant's own frames. Built here once from the
 * host's item error and the event; every place a failure surfaces passes these fields through.
 */
export interface RuntimeFailure {
  exceptionType?: string;
  eventType?: string;
  eventId?: string;
  version?: number;
  /** The event's tenant-wide position, when known (not before an append commits). */
  position?: number;
  frames?: TenantFrame[];
}

/** The failure of `event` as the host reported it (`error` absent: a deadline or a crash, no exception). */
export function runtimeFailure(
  event: Pick<WireEvent, 'eventType' | 'eventId' | 'version'>,
  error?: ItemError,
  position?: number,
): RuntimeFailure {
  return {
    ...(error?.exceptionType !== undefined ? { exceptionType: error.exceptionType } : {}),
    eventType: event.eventType,
    eventId: event.eventId,
    version: event.version,
    ...(position !== undefined ? { position } : {}),
    ...(error?.exceptionType !== undefined ? { frames: error.frames ?? [] } : {}),
  };
}

const TENANT_FRAME_SCHEMA = object({
  method: string({ description: "the tenant's method: declaring type's full name + '.' + method name" }),
  file: nullable(string({ description: "the file's path in the uploaded archive" })),
  line: nullable(integer({ minimum: 1 })),
});

/** The schema fields of RuntimeFailure, for the views that carry one (all optional). */
export const RUNTIME_FAILURE_FIELDS = {
  exceptionType: string({
    description: 'the .NET exception type, e.g. System.InvalidOperationException (absent for a deadline, a crash, a limit)',
  }),
  eventType: string({ description: 'the event the tenant code failed on' }),
  eventId: string(),
  version: integer({ minimum: 1, description: "the event's version in its aggregate" }),
  position: integer({ minimum: 1, description: "the event's tenant-wide position, when known" }),
  frames: arrayOf(TENANT_FRAME_SCHEMA, {
    description: "the tenant's own stack frames, innermost first (no host, SDK or framework frame); file and line from the embedded PDB",
  }),
};
