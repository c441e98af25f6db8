import { isoTime } from '../common/iso-time';
import { LaneRecord, ProjectionRecord } from '../store/projection-repository.port';
import { UploadRecord } from '../store/upload-repository.port';
import { ApplyLag, StateRead } from './projection-reader';

const STATUS: Record<UploadRecord['status'], string> = { pending: 'compiling', compiled: 'compiled', failed: 'failed' };

/**
 * The projection status record in both of the contract's shapes: current (`type`, `uploadId`,
 * `discovered`, `activeVersion`/`pendingVersion`) and earlier (`projectionId`, `compiledClassName`,
 * `compiledStateType`); `id` is the deprecated alias of `uploadId`.
 */
export function projectionStatusView(u: UploadRecord, p: ProjectionRecord | null, lag?: { active?: ApplyLag; pending?: ApplyLag }) {
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
      ? { compilationError: u.compilationError }
      : status === 'compiled'
        ? {
            discovered: projections.map((d) => ({ className: d.className, stateTypeName: d.stateTypeName, kind: 'projection' })),
            compiledClassName: first?.className ?? null,
            compiledStateType: first?.stateTypeName ?? null,
          }
        : {}),
    createdAt: isoTime(u.createdAt),
    compiledAt: u.compiledAt === null ? null : isoTime(u.compiledAt),
    ...(p?.activeVersion ? { activeVersion: version(p.activeVersion, lag?.active) } : {}),
    ...(p?.pendingVersion ? { pendingVersion: version(p.pendingVersion, lag?.pending) } : {}),
  };
}

export function projectionListView(p: ProjectionRecord) {
  return {
    projectionId: p.projectionId,
    name: p.name,
    activeVersion: p.activeVersion ? { uploadId: p.activeVersion } : null,
    ...(p.pendingVersion ? { pendingVersion: { uploadId: p.pendingVersion } } : {}),
    createdAt: isoTime(p.createdAt),
  };
}

export function laneView(l: LaneRecord) {
  return {
    key: l.key,
    appliedPosition: l.appliedPosition,
    updatedAt: l.updatedAt === null ? null : isoTime(l.updatedAt),
    ...(l.heldPosition !== null ? { held: { position: l.heldPosition, error: l.heldError, attempts: l.attempts } } : {}),
  };
}

/**
 * The answer to a state read: 200 with the state, or 202 while the version catches up (a success:
 * the client is asked to read again, nothing went wrong).
 */
export function stateAnswer(r: StateRead) {
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

export function keysPageView(lanes: LaneRecord[]) {
  return { keys: lanes.map((l) => l.key), ...(lanes.length ? { next: lanes[lanes.length - 1].key } : {}) };
}
