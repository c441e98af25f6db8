import { DIAGNOSTIC_SCHEMA } from '../common/diagnostic';
import { isoTime } from '../common/iso-time';
import {
  anyJson,
  arrayOf,
  constant,
  Infer,
  integer,
  jsonObject,
  nullable,
  object,
  string,
  timestamp,
  withLeadingFields,
} from '../common/json-schema';
import { ProjectionRecord } from '../store/projection-catalog.port';
import { LaneRecord } from '../store/lanes/lane-records';
import { UploadRecord } from '../store/upload-repository.port';
import { ApplyLag, StateRead } from './projection-reader';
import { HeldEvent, HOLD_SCHEMA, holdView } from './held-event';

const STATUS: Record<UploadRecord['status'], string> = { pending: 'compiling', compiled: 'compiled', failed: 'failed' };

/**
 * The projection status record in both of the contract's shapes: current (`type`, `uploadId`,
 * `discovered`, `activeVersion`/`pendingVersion`) and earlier (`projectionId`, `compiledClassName`,
 * `compiledStateType`); `id` is the deprecated alias of `uploadId`.
 */
export function projectionStatusView(
  u: UploadRecord,
  p: ProjectionRecord | null,
  lag?: { active?: ApplyLag; pending?: ApplyLag },
): ProjectionStatus {
  const projections = (u.discovered ?? []).filter((d) => d.kind === 'projection');
  const first = projections[0];
  // Compiled but not yet deployed (the moment between the two): still 'compiling', so that a client
  // that sees 'compiled' always finds the stable projectionId beside it.
  const status = u.status === 'compiled' && !p ? 'pending' : u.status;
  const version = (uploadId: string, l?: ApplyLag) => ({ uploadId, ...(l ? { applyLag: l } : {}) });
  return {
    type: p ? 'runtime' : 'compilation',
    uploadId: u.uploadId,
    id: u.uploadId,
    projectionId: p?.projectionId ?? null,
    ...(p ? { name: p.name } : {}),
    status: STATUS[status],
    kind: 'projection' as const,
    ...(status === 'failed'
      ? // markFailed writes the status and its error together.
        { compilationError: u.compilationError as string }
      : status === 'compiled'
        ? {
            discovered: projections.map((d) => ({ className: d.className, stateTypeName: d.stateTypeName, kind: 'projection' })),
            compiledClassName: first?.className ?? null,
            compiledStateType: first?.stateTypeName ?? null,
          }
        : {}),
    diagnostics: u.diagnostics ?? [],
    createdAt: isoTime(u.createdAt),
    compiledAt: u.compiledAt === null ? null : isoTime(u.compiledAt),
    ...(p?.activeVersion ? { activeVersion: version(p.activeVersion, lag?.active) } : {}),
    ...(p?.pendingVersion ? { pendingVersion: version(p.pendingVersion, lag?.pending) } : {}),
  };
}

const APPLY_LAG_SCHEMA = object(
  {
    totalInboxDepth: integer({ description: "events queued behind the projection's slowest key" }),
    heldLanes: integer({ description: 'above 0: a key is stopped on a failing event and needs attention' }),
    laneCount: integer({ description: 'state keys that have taken a write' }),
    headPosition: integer(),
    appliedPosition: integer(),
    lagEvents: integer({ description: 'head − applied' }),
    oldestUnappliedAgeMs: integer(),
  },
  {
    firstHeld: withLeadingFields(
      { key: string() },
      { ...HOLD_SCHEMA, description: 'with heldLanes above 0: the first held lane in key order and the event it is held on' },
    ),
  },
  { description: 'only with include=lag; omitted when temporarily unavailable' },
);
const VERSION_SCHEMA = object({ uploadId: string({ format: 'uuid' }) }, { applyLag: APPLY_LAG_SCHEMA });

/** GET /projections/{id}/status (ProjectionStatus adds `webhook`). */
export const PROJECTION_STATUS_SCHEMA = object(
  {
    type: { enum: ['compilation', 'runtime'] },
    uploadId: string({ format: 'uuid' }),
    id: string({ format: 'uuid', deprecated: true, description: 'deprecated: the same value as uploadId' }),
    projectionId: nullable(string({ description: 'the stable id; null until compilation completes' })),
    status: { enum: Object.values(STATUS) },
    kind: constant('projection'),
    diagnostics: arrayOf(DIAGNOSTIC_SCHEMA, {
      description: "the compile's errors and warnings, each with file/line/column; empty while compiling",
    }),
    createdAt: timestamp(),
    compiledAt: nullable(timestamp()),
  },
  {
    name: string(),
    discovered: arrayOf(object({ className: string(), stateTypeName: string(), kind: constant('projection') })),
    compiledClassName: nullable(string({ description: 'earlier shape' })),
    compiledStateType: nullable(string({ description: 'earlier shape' })),
    compilationError: string(),
    activeVersion: VERSION_SCHEMA,
    pendingVersion: VERSION_SCHEMA,
    webhook: jsonObject({ description: "the webhook endpoint's status, as GET /projections/{id}/webhook answers it" }),
  },
);
export type ProjectionStatus = Infer<typeof PROJECTION_STATUS_SCHEMA>;

export function projectionListView(p: ProjectionRecord): ProjectionSummary {
  return {
    projectionId: p.projectionId,
    name: p.name,
    activeVersion: p.activeVersion ? { uploadId: p.activeVersion } : null,
    ...(p.pendingVersion ? { pendingVersion: { uploadId: p.pendingVersion } } : {}),
    createdAt: isoTime(p.createdAt),
  };
}

const PROJECTION_SUMMARY_SCHEMA = object(
  { projectionId: string(), name: string(), activeVersion: nullable(object({ uploadId: string() })), createdAt: timestamp() },
  { pendingVersion: object({ uploadId: string() }) },
);
export type ProjectionSummary = Infer<typeof PROJECTION_SUMMARY_SCHEMA>;

export const PROJECTION_LIST_SCHEMA = object({ projections: arrayOf(PROJECTION_SUMMARY_SCHEMA) });

/** `held`: the events the page's holds are on (HeldEvents), by position. */
export function laneView(l: LaneRecord, held?: Map<number, HeldEvent>): Lane {
  return {
    key: l.key,
    appliedPosition: l.appliedPosition,
    updatedAt: l.updatedAt === null ? null : isoTime(l.updatedAt),
    ...(l.heldPosition !== null ? { held: holdView(l, held?.get(l.heldPosition)) } : {}),
  };
}

export const LANE_SCHEMA = object({ key: string(), appliedPosition: integer(), updatedAt: nullable(timestamp()) }, { held: HOLD_SCHEMA });
export type Lane = Infer<typeof LANE_SCHEMA>;
export const LANES_PAGE_SCHEMA = object({ lanes: arrayOf(LANE_SCHEMA) });

/**
 * The answer to a state read: 200 with the state, or 202 while the version catches up (a success:
 * the client is asked to read again, nothing went wrong).
 */
export function stateAnswer(r: StateRead): { status: 200; body: ProjectionState } | { status: 202; body: CatchingUp } {
  if (r.kind === 'ready') {
    return {
      status: 200 as const,
      body: {
        projectionId: r.projectionId,
        stateKey: r.stateKey,
        state: r.state,
        updatedAt: isoTime(r.updatedAt),
        appliedPosition: r.appliedPosition,
      },
    };
  }
  return {
    status: 202 as const,
    body: {
      projectionId: r.projectionId,
      status: 'catching_up' as const,
      ...(r.minPosition !== undefined ? { minPosition: r.minPosition } : {}),
      appliedPosition: r.appliedPosition,
    },
  };
}

export const PROJECTION_STATE_SCHEMA = object({
  projectionId: string(),
  stateKey: string(),
  state: anyJson({ description: "the full state produced by the projection's Apply method" }),
  updatedAt: timestamp(),
  appliedPosition: integer(),
});
export const CATCHING_UP_SCHEMA = object(
  { projectionId: string(), status: constant('catching_up'), appliedPosition: integer() },
  { minPosition: integer() },
);
export type ProjectionState = Infer<typeof PROJECTION_STATE_SCHEMA>;
export type CatchingUp = Infer<typeof CATCHING_UP_SCHEMA>;

export function keysPageView(lanes: LaneRecord[]): KeysPage {
  return { keys: lanes.map((l) => l.key), ...(lanes.length ? { next: lanes[lanes.length - 1].key } : {}) };
}

export const KEYS_PAGE_SCHEMA = object(
  { keys: arrayOf(string()) },
  { next: string({ description: 'the last key of this page: pass it as after for the next one' }) },
);
export type KeysPage = Infer<typeof KEYS_PAGE_SCHEMA>;
