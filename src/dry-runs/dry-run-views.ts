import { DIAGNOSTIC_SCHEMA } from '../common/diagnostic';
import {
  arrayOf,
  boolean,
  constant,
  Infer,
  integer,
  jsonObject,
  nullable,
  object,
  oneOf,
  oneOfStrings,
  string,
  timestamp,
} from '../common/json-schema';

const FAILED_EVENT_SCHEMA = object(
  {
    eventId: string(),
    position: integer(),
    aggregateId: string(),
    key: nullable(string({ description: 'the state key it was applied under (null: its ResolveKey(s) failed)' })),
    code: string({ description: 'APPLY_FAILED, RESOLVE_FAILED, STATE_TOO_LARGE, …' }),
    message: string(),
  },
  {},
  { description: "the first failing event of its type; the host's error fields (exceptionType, frames, …) pass through" },
);

const DIFF_SCHEMA = object({
  key: string(),
  change: oneOfStrings(['added', 'removed', 'changed'] as const),
  patch: arrayOf(jsonObject({ description: 'an RFC 6902 operation: op, path (RFC 6901), value' }), {
    description: "from the live state to the candidate's: added is one add of the whole state at '', removed one remove of ''",
  }),
});

export const DRY_RUN_REPORT_SCHEMA = object({
  candidate: object({ className: string() }),
  baseline: nullable(
    oneOf(
      object({ versionId: string({ description: "the projection's active version, whose stored lane states were compared" }) }),
      object({ reducerId: string(), className: string({ description: 'the reducer bound to the type, folded beside the candidate' }) }),
    ),
  ),
  range: object({
    fromPosition: integer(),
    toPosition: integer({ description: "the range's end: the tenant's head at the start, at most" }),
  }),
  eventsRead: integer(),
  eventsApplied: integer(),
  truncated: boolean(),
  truncatedReason: nullable(oneOfStrings(['maxEvents', 'maxKeys', 'maxStateBytes', 'maxDurationMs'] as const)),
  compared: oneOfStrings(['all', 'touched'] as const, {
    description:
      'all: the whole history, every key (removed keys counted); touched: a range, a sample or a truncated run — only the keys the candidate folded',
  }),
  keys: object({ added: integer(), removed: integer(), changed: integer(), unchanged: integer(), held: integer() }),
  diffs: arrayOf(DIFF_SCHEMA, { description: 'at most 20, the first differing keys in key order' }),
  failures: arrayOf(object({ eventType: string(), count: integer(), first: FAILED_EVENT_SCHEMA }), {
    description: 'by event type, in the order the types first failed',
  }),
});
export type DryRunReport = Infer<typeof DRY_RUN_REPORT_SCHEMA>;

export const DRY_RUN_STATUS_SCHEMA = object(
  {
    dryRunId: string(),
    kind: oneOfStrings(['projection', 'reducer'] as const),
    target: string({ description: 'the projectionId, or the aggregate type' }),
    status: oneOfStrings(['compiling', 'running', 'completed', 'failed'] as const),
    startedAt: timestamp(),
    finishedAt: nullable(timestamp()),
    progress: object({ eventsRead: integer(), keysSeen: integer(), position: integer({ description: 'the last position read' }) }),
  },
  {
    report: DRY_RUN_REPORT_SCHEMA,
    error: object({ code: string(), message: string() }, {}, { description: 'why a failed run failed' }),
    diagnostics: arrayOf(DIAGNOSTIC_SCHEMA, { description: "a failed compile's diagnostics (errors and warnings)" }),
    expiresAt: timestamp({ description: 'kept in memory on the instance that ran it until then (DRY_RUN_KEEP_MS)' }),
  },
);
export type DryRunStatusView = Infer<typeof DRY_RUN_STATUS_SCHEMA>;

export const DRY_RUN_ACCEPTED_SCHEMA = object({
  dryRunId: string(),
  status: constant('running'),
  message: string(),
});
