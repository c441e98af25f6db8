import { DomainError } from '../common/domain-error';
import { Folded } from './reducer-runner';

/**
 * The host's failures that are the new event's own doing, and the code the append is refused with.
 * APPLY_FAILED: the reducer threw on it — how a reducer guards an invariant. STATE_TOO_LARGE: the
 * event would take the state over STATE_MAX_BYTES; stored, it would hold the aggregate for good.
 * Every other failure (a deadline, a crash of the executor, the tenant's memory cap, a state that
 * cannot be written or read) keeps the older rule: the events are stored and the state is held at
 * the event (`stateError`), since the events are facts and the fault is not theirs.
 */
const REFUSING: Partial<Record<string, 'REDUCER_REJECTED' | 'STATE_TOO_LARGE'>> = {
  APPLY_FAILED: 'REDUCER_REJECTED',
  STATE_TOO_LARGE: 'STATE_TOO_LARGE',
};

/** Host fields never passed to a client: the raw stack trace mixes the service's frames with the tenant's. */
const WITHHELD = new Set(['code', 'message', 'stackTrace']);

/** An event of the append as the reducer saw it. */
export interface FoldedEvent {
  eventType: string;
  eventId?: string;
}

/**
 * The refusal of an append whose reducer failed on one of the append's own events (folded on a
 * state at `baseVersion` that was not itself failed), or undefined when the append goes ahead.
 * The body carries the failing event (index in the request, type, the id and version it would
 * have had), the host's `reducerError` (`CODE: message`, as a state read shows a held one) and,
 * passed through as the host gives them, its other fields (`exceptionType`; the errors slice's
 * `frames` …) — this builds none of them.
 */
export function refusalOf(folded: Folded, events: FoldedEvent[], baseVersion: number): DomainError | undefined {
  const failure = folded.failure;
  if (folded.failedVersion === undefined || !failure) return undefined;
  const code = failure.code === undefined ? undefined : REFUSING[failure.code];
  const index = folded.failedVersion - baseVersion - 1;
  // Not one of this append's events (cannot happen for a fold of new events only): not this append's fault.
  if (!code || index < 0 || index >= events.length) return undefined;
  const event = events[index];
  const passed = Object.fromEntries(Object.entries(failure).filter(([k, v]) => !WITHHELD.has(k) && v !== undefined));
  const what = code === 'REDUCER_REJECTED' ? 'the reducer refused' : 'the state would be too large after';
  const at = events.length > 1 ? `event ${index + 1} of ${events.length}` : 'the event';
  return new DomainError(code, `${what} ${at} (${event.eventType}): ${failure.message}; nothing was stored`, {
    ...passed,
    reducerError: `${failure.code}: ${failure.message}`,
    eventIndex: index,
    eventType: event.eventType,
    ...(event.eventId !== undefined ? { eventId: event.eventId } : {}),
    version: folded.failedVersion,
  });
}
