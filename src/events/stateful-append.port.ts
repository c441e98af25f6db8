import { RawJson } from '../common/raw-json';
import { AppendRequest, AppendResult } from '../store/event-log.port';
import type { RuntimeFailure } from '../tenant-code/runtime-failure';

/** What an append answers beyond the stored events: the aggregate's state, when a reducer is bound. */
export interface AppendOutcomeWithState {
  result: AppendResult;
  /** The state's JSON text, written into the response verbatim. */
  state?: RawJson;
  /** The reducer failed on these events (or the aggregate was held before them): with its exception, event and frames when known. */
  stateError?: { code: 'REDUCER_FAILED' | 'STATE_TOO_LARGE'; message: string; failedVersion: number } & RuntimeFailure;
  /** The request's Idempotency-Key was already answered: this is that answer again, and nothing was stored. */
  replayed?: boolean;
}

/** What of an answer is not in the log, as remembered with an idempotency key (AggregateStateKeeper writes it). */
export interface RememberedOutcome {
  /** The state's JSON text. */
  state?: string;
  stateError?: AppendOutcomeWithState['stateError'];
}

/**
 * A stage that may take over an append (the reducers module computes the state and writes it in
 * the same commit). A port, so that events does not depend on reducers: AppendPipeline.append and
 * EventEraser.erase call it; ReducersModule binds it to AggregateStateKeeper.
 */
export abstract class StatefulAppend {
  /** undefined when it has nothing to do with this append (no reducer bound): plain append then. */
  abstract append(request: AppendRequest): Promise<AppendOutcomeWithState | undefined>;
  /**
   * A multi-aggregate transaction's members, committed together (one outcome per member, in order);
   * undefined when no member's type has a reducer bound: plain group commit then.
   */
  abstract appendTransaction(members: AppendRequest[]): Promise<AppendOutcomeWithState[] | undefined>;
  /** The aggregate was erased: whatever state of it this instance holds in memory goes. */
  abstract erased(tenantId: string, aggregateId: string): void;
}
