import type { RawJson } from '../common/raw-json';
import { AppendRequest, AppendResult } from '../store/event-log.port';
import { AppendBatcher } from './append-batcher';

/** What an append answers beyond the stored events: the aggregate's state, when a reducer is bound. */
export interface AppendOutcomeWithState {
  result: AppendResult;
  /** The state's JSON text, written into the response verbatim. */
  state?: RawJson;
  stateError?: { code: 'REDUCER_FAILED' | 'STATE_TOO_LARGE'; message: string; failedVersion: number };
}

/**
 * A stage that may take over an append (the reducers module computes the state and writes it in
 * the same commit). A port, so that events does not depend on reducers.
 */
export interface StatefulAppend {
  /** undefined when it has nothing to do with this append (no reducer bound): plain append then. */
  append(request: AppendRequest): Promise<AppendOutcomeWithState | undefined>;
}

/** The append path: the stateful stage when one is registered and wants the append, else group commit. */
export class AppendPipeline {
  private stateful?: StatefulAppend;
  private readonly committed: ((tenantId: string, position: number) => void)[] = [];

  constructor(private readonly batcher: AppendBatcher) {}

  register(stage: StatefulAppend): void {
    this.stateful = stage;
  }

  /** Told after each acknowledged append (projections wake their routers: live latency without polling). */
  onCommitted(listener: (tenantId: string, position: number) => void): void {
    this.committed.push(listener);
  }

  async append(request: AppendRequest): Promise<AppendOutcomeWithState> {
    const handled = this.stateful ? await this.stateful.append(request) : undefined;
    const outcome = handled ?? { result: await this.batcher.append(request) };
    const events = outcome.result.events;
    for (const l of this.committed) l(request.tenantId, events[events.length - 1].position);
    return outcome;
  }
}
