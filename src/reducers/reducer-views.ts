import { DIAGNOSTIC_SCHEMA } from '../common/diagnostic';
import { isoTime } from '../common/iso-time';
import { anyJson, arrayOf, constant, Infer, integer, nullable, object, string, timestamp } from '../common/json-schema';
import { Binding } from '../store/reducer-state.port';
import { UploadRecord } from '../store/upload-repository.port';
import { AggregateStateView, stateErrorCode } from './aggregate-state-keeper';
import { FailedPage } from './failed-aggregates';
import { CatchUpProgress } from './state-catch-up';

const STATUS: Record<UploadRecord['status'], string> = { pending: 'pending_compilation', compiled: 'compiled', failed: 'failed' };

/**
 * The reducer record in both of the contract's shapes at once: `id`/`discovered` (current) and
 * `reducerId`/`compiledClassName`/`compiledStateType` (earlier clients; the first discovered reducer).
 */
export function reducerRecordView(u: UploadRecord): ReducerRecord {
  const reducers = (u.discovered ?? []).filter((d) => d.kind === 'reducer');
  const first = reducers[0];
  return {
    id: u.uploadId,
    reducerId: u.uploadId,
    status: STATUS[u.status],
    kind: 'reducer' as const,
    ...(u.status === 'failed'
      ? // markFailed writes the status and its error together.
        { compilationError: u.compilationError as string }
      : u.status === 'compiled'
        ? {
            discovered: reducers.map((d) => ({
              className: d.className,
              stateTypeName: d.stateTypeName,
              kind: 'reducer',
              // null from the compiler when not known (its JSON writes nulls); the schema says so.
              aggregateType: d.aggregateType ?? null,
            })),
            compiledClassName: first?.className ?? null,
            compiledStateType: first?.stateTypeName ?? null,
          }
        : {}),
    diagnostics: u.diagnostics ?? [],
    createdAt: isoTime(u.createdAt),
    compiledAt: u.compiledAt === null ? null : isoTime(u.compiledAt),
  };
}

export const REDUCER_RECORD_SCHEMA = object(
  {
    id: string({ description: 'the reducerId given at upload' }),
    reducerId: string({ description: 'earlier shape: the same value as id' }),
    status: { enum: Object.values(STATUS) },
    kind: constant('reducer'),
    diagnostics: arrayOf(DIAGNOSTIC_SCHEMA, {
      description: "the compile's errors and warnings, each with file/line/column; empty while compiling",
    }),
    createdAt: timestamp(),
    compiledAt: nullable(timestamp()),
  },
  {
    discovered: arrayOf(
      object({ className: string(), stateTypeName: string(), kind: constant('reducer'), aggregateType: nullable(string()) }),
      { description: 'when compiled: every reducer implementation found' },
    ),
    compiledClassName: nullable(string({ description: 'earlier shape: the first discovered reducer' })),
    compiledStateType: nullable(string({ description: 'earlier shape: its state type' })),
    compilationError: string({ description: 'when the compilation failed, instead of discovered' }),
  },
);
export type ReducerRecord = Infer<typeof REDUCER_RECORD_SCHEMA>;

/** GET /reducers: a page of reducer records (no paging fields beyond `next`, as GET /projections/{id}/keys). */
export function reducerListView(page: { records: UploadRecord[]; next?: string }): ReducerList {
  return { reducers: page.records.map(reducerRecordView), ...(page.next !== undefined ? { next: page.next } : {}) };
}

export const REDUCER_LIST_SCHEMA = object(
  { reducers: arrayOf(REDUCER_RECORD_SCHEMA) },
  { next: string({ description: 'the last reducerId of this full page: pass it as after for the next one' }) },
);
export type ReducerList = Infer<typeof REDUCER_LIST_SCHEMA>;

/** POST /reducers/upload (202): the same shape in the contract's current and earlier versions. */
export const REDUCER_UPLOAD_ANSWER_SCHEMA = object({ reducerId: string(), status: constant('pending_compilation') });

export function bindingView(b: Binding, catchUp?: CatchUpProgress): BindingBody {
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

const CATCH_UP_SCHEMA = object({ status: { enum: ['running', 'done', 'superseded', 'failed'] }, aggregates: integer(), events: integer() });

const BINDING_FIELDS = { aggregateType: string(), reducerId: string(), className: string(), boundAt: timestamp() };

/** GET /aggregate-types/{type}: the binding, and the state catch-up it started while that one is known. */
export const BINDING_SCHEMA = object(BINDING_FIELDS, { catchUp: CATCH_UP_SCHEMA });
export type BindingBody = Infer<typeof BINDING_SCHEMA>;

/** GET /aggregate-types: a page of bound aggregate types with their bindings. */
export function aggregateTypeListView(page: { bindings: Binding[]; next?: string }): AggregateTypeList {
  return { aggregateTypes: page.bindings.map((b) => bindingView(b)), ...(page.next !== undefined ? { next: page.next } : {}) };
}

export const AGGREGATE_TYPE_LIST_SCHEMA = object(
  { aggregateTypes: arrayOf(object(BINDING_FIELDS)) },
  { next: string({ description: 'the last aggregateType of this full page: pass it as after for the next one' }) },
);
export type AggregateTypeList = Infer<typeof AGGREGATE_TYPE_LIST_SCHEMA>;

/** PUT /aggregate-types/{type}: the binding and the contract's message (earlier clients read the binding only). */
export const BOUND_SCHEMA = object({
  ...BINDING_FIELDS,
  message: string({ description: 'says that state catch-up is in progress' }),
});

export function stateView(s: AggregateStateView): AggregateState {
  return {
    aggregateId: s.aggregateId,
    aggregateType: s.aggregateType,
    version: s.version,
    state: s.state,
    lastModified: isoTime(s.lastModified),
  };
}

export const AGGREGATE_STATE_SCHEMA = object({
  aggregateId: string(),
  aggregateType: string(),
  version: integer(),
  state: anyJson({ description: "the reducer's state" }),
  lastModified: timestamp(),
});
export type AggregateState = Infer<typeof AGGREGATE_STATE_SCHEMA>;

export function failedPageView(p: FailedPage): FailedAggregatesPage {
  return {
    aggregates: p.aggregates.map((a) => ({
      aggregateId: a.aggregateId,
      version: a.version,
      failedVersion: a.failedVersion,
      code: stateErrorCode(a.error),
      message: a.error,
      eventId: a.eventId,
      eventType: a.eventType,
      lastModified: isoTime(a.updatedAt),
    })),
    ...(p.next !== undefined ? { next: p.next } : {}),
    ...(p.catchUp ? { catchUp: { status: p.catchUp.status, aggregates: p.catchUp.aggregates, events: p.catchUp.events } } : {}),
  };
}

/** GET /aggregate-types/{type}/failed: aggregates held at a failed event under the current binding, in id order. */
export const FAILED_AGGREGATES_SCHEMA = object(
  {
    aggregates: arrayOf(
      object({
        aggregateId: string(),
        version: integer({ description: 'the stream version the state covers (events after the failed one are stored, not applied)' }),
        failedVersion: integer({ description: 'the version of the event the reducer failed on' }),
        code: { enum: ['REDUCER_FAILED', 'STATE_TOO_LARGE'] },
        message: string({ description: "the host's code and message (a reducer's exception message)" }),
        eventId: nullable(string({ description: 'the failed event' })),
        eventType: nullable(string()),
        lastModified: timestamp(),
      }),
    ),
  },
  {
    next: string({ description: 'present when more may follow: pass it as after for the next page' }),
    // The bind's catch-up, while this instance knows it: running, aggregates it has not reached are not listed yet.
    catchUp: CATCH_UP_SCHEMA,
  },
);
export type FailedAggregatesPage = Infer<typeof FAILED_AGGREGATES_SCHEMA>;
