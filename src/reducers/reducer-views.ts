import { isoTime } from '../common/iso-time';
import { Binding } from '../store/reducer-state.port';
import { UploadRecord } from '../store/upload-repository.port';
import { AggregateStateView } from './aggregate-state-keeper';
import { CatchUpProgress } from './state-catch-up';

const STATUS: Record<UploadRecord['status'], string> = { pending: 'pending_compilation', compiled: 'compiled', failed: 'failed' };

/**
 * The reducer record in both of the contract's shapes at once: `id`/`discovered` (current) and
 * `reducerId`/`compiledClassName`/`compiledStateType` (earlier clients; the first discovered reducer).
 */
export function reducerRecordView(u: UploadRecord) {
  const reducers = (u.discovered ?? []).filter((d) => d.kind === 'reducer');
  const first = reducers[0];
  return {
    id: u.uploadId,
    reducerId: u.uploadId,
    status: STATUS[u.status],
    kind: 'reducer' as const,
    ...(u.status === 'failed'
      ? { compilationError: u.compilationError }
      : u.status === 'compiled'
        ? {
            discovered: reducers.map((d) => ({
              className: d.className,
              stateTypeName: d.stateTypeName,
              kind: 'reducer',
              aggregateType: d.aggregateType,
            })),
            compiledClassName: first?.className ?? null,
            compiledStateType: first?.stateTypeName ?? null,
          }
        : {}),
    createdAt: isoTime(u.createdAt),
    compiledAt: u.compiledAt === null ? null : isoTime(u.compiledAt),
  };
}

export function bindingView(b: Binding, catchUp?: CatchUpProgress) {
  return {
    aggregateType: b.aggregateType,
    reducerId: b.reducerId,
    className: b.className,
    boundAt: isoTime(b.boundAt),
    ...(catchUp && catchUp.bindingId === b.bindingId
      ? { catchUp: { status: catchUp.status, aggregates: catchUp.aggregates, events: catchUp.events } }
      : {}),
  };
}

export function stateView(s: AggregateStateView) {
  return {
    aggregateId: s.aggregateId,
    aggregateType: s.aggregateType,
    version: s.version,
    state: s.state,
    lastModified: isoTime(s.lastModified),
  };
}
