import { RawJson } from '../common/raw-json';
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

/** The append path: the stateful stage when it wants the append, else group commit; then the committed ports. */
export class AppendPipeline {
  constructor(
    private readonly batcher: AppendBatcher,
    private readonly stateful: StatefulAppend | null,
    private readonly committed: AppendCommitted | null,
    /** EVENTS_APPENDED: the event streams' doorbell. */
    private readonly live: AppendCommitted | null = null,
    /** Test hook (TEST_KILL_AFTER_COMMIT_KEY): SIGKILL this process once an append with this key is committed, before its answer. */
    private readonly killAfterCommitKey?: string,
  ) {}

  async append(request: AppendRequest): Promise<AppendOutcomeWithState> {
    const handled = this.stateful ? await this.stateful.append(request) : undefined;
    const outcome = handled ?? { result: await this.batcher.append(request) };
    const replay = outcome.result.replay;
    if (replay) return replayedOutcome(outcome.result, replay.outcome);
    if (this.killAfterCommitKey !== undefined && request.idempotency?.key === this.killAfterCommitKey) process.kill(process.pid, 'SIGKILL');
    const events = outcome.result.events;
    this.committed?.appended(request.tenantId, events[events.length - 1].position, appendTrace(events[0].position));
    this.live?.appended(request.tenantId, events[events.length - 1].position);
    return outcome;
  }
}

/** The first answer again: its events as stored, and the state (or state error) remembered with the key. */
function replayedOutcome(result: AppendOutcomeWithState['result'], remembered: string | null): AppendOutcomeWithState {
  const o = remembered === null ? {} : (JSON.parse(remembered) as RememberedOutcome);
  if (o.stateError) return { result, stateError: o.stateError, replayed: true };
  return o.state !== undefined ? { result, state: new RawJson(o.state), replayed: true } : { result, replayed: true };
}
