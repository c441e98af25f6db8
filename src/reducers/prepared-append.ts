import { AppendOutcomeWithState } from '../events/stateful-append.port';
import { AppendRequest, StreamInfo } from '../store/event-log.port';
import { Binding } from '../store/reducer-state.port';
import type { RuntimeFailure } from '../tenant-code/runtime-failure';
import { Folded } from './reducer-runner';

/** A request's aggregate under a bound reducer (AggregateStateKeeper.kindOf; a single append or a transaction's member). */
export interface Kind {
  key: string;
  type: string;
  binding: Binding;
  /** The stream's row, read at most once for the first attempt. */
  stream: () => Promise<StreamInfo | null>;
}

/** A request made ready for the commit by AggregateStateKeeper.prepare: its events' ids, the fold, the refusal. */
export interface Prepared {
  key: string;
  binding: Binding;
  request: AppendRequest;
  folded: Folded;
  failure?: RuntimeFailure;
  stateError?: NonNullable<AppendOutcomeWithState['stateError']>;
  /** JSON text of the answer's state part, as remembered with an idempotency key. */
  remembered: string;
}
