import type { RawJson } from '../common/raw-json';
import { AppendRequest, AppendResult } from '../store/event-log.port';
import { AppendBatcher } from './append-batcher';
import { AppendCommitted } from './append-committed.port';
import { appendTrace } from '../observability/tracing/spans';

/** What an append answers beyond the stored events: the aggregate's state, when a reducer is bound. */
export interface AppendOutcomeWithState {
  result: AppendResult;
  /** The state's JSON text, written into the response verbatim. */
  state?: RawJson;
  stateError?: { code: 'REDUCER_FAILED' | 'STATE_TOO_LARGE'; message: string; failedVersion: number };
}

/**
 * A stage that may take over an append (the reducers module computes the state and writes it in
 * the same commit). A port, so that events does not depend on reducers: ReducersModule binds
 * STATEFUL_APPEND to AggregateStateKeeper.
 */
export interface StatefulAppend {
  /** undefined when it has nothing to do with this append (no reducer bound): plain append then. */
  append(request: AppendRequest): Promise<AppendOutcomeWithState | undefined>;
  /** The aggregate was erased: whatever state of it this instance holds in memory goes. */
  erased?(tenantId: string, aggregateId: string): void;
}

export const STATEFUL_APPEND = Symbol('STATEFUL_APPEND');

/** The append path: the stateful stage when it wants the append, else group commit; then the committed port. */
export class AppendPipeline {
  constructor(
    private readonly batcher: AppendBatcher,
    private readonly stateful: StatefulAppend | null,
    private readonly committed: AppendCommitted | null,
  ) {}

  async append(request: AppendRequest): Promise<AppendOutcomeWithState> {
    const handled = this.stateful ? await this.stateful.append(request) : undefined;
    const outcome = handled ?? { result: await this.batcher.append(request) };
    const events = outcome.result.events;
    this.committed?.appended(request.tenantId, events[events.length - 1].position, appendTrace(events[0].position));
    return outcome;
  }
}
