import { Inject, Injectable } from '@nestjs/common';
import { RawJson } from '../common/raw-json';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { AppendRequest } from '../store/event-log.port';
import { AppendBatcher } from './append-batcher';
import { AppendCommitted, EventsAppended, EventWebhooksAppended } from './append-committed.port';
import { AppendOutcomeWithState, RememberedOutcome, StatefulAppend } from './stateful-append.port';
import { appendTrace } from '../observability/tracing/spans';

/** The append path: the stateful stage when it wants the append, else group commit; then the committed ports. */
@Injectable()
export class AppendPipeline {
  /** Test hook (TEST_KILL_AFTER_COMMIT_KEY): SIGKILL this process once an append with this key is committed, before its answer. */
  private readonly killAfterCommitKey?: string;

  constructor(
    private readonly batcher: AppendBatcher,
    private readonly stateful: StatefulAppend,
    /** The lanes: told first. */
    private readonly committed: AppendCommitted,
    /** The event webhooks: told after the lanes. */
    private readonly hooks: EventWebhooksAppended,
    /** The event streams' doorbell: told last. */
    private readonly live: EventsAppended,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.killAfterCommitKey = config.idempotency.killAfterCommitKey;
  }

  async append(request: AppendRequest): Promise<AppendOutcomeWithState> {
    const handled = await this.stateful.append(request);
    const outcome = handled ?? { result: await this.batcher.append(request) };
    const replay = outcome.result.replay;
    if (replay) return replayedOutcome(outcome.result, replay.outcome);
    if (this.killAfterCommitKey !== undefined && request.idempotency?.key === this.killAfterCommitKey) process.kill(process.pid, 'SIGKILL');
    const events = outcome.result.events;
    const position = events[events.length - 1].position;
    const traced = appendTrace(events[0].position);
    this.committed.appended(request.tenantId, position, traced);
    this.hooks.appended(request.tenantId, position, traced);
    this.live.appended(request.tenantId, position);
    return outcome;
  }
}

/** The first answer again: its events as stored, and the state (or state error) remembered with the key. */
function replayedOutcome(result: AppendOutcomeWithState['result'], remembered: string | null): AppendOutcomeWithState {
  const o = remembered === null ? {} : (JSON.parse(remembered) as RememberedOutcome);
  if (o.stateError) return { result, stateError: o.stateError, replayed: true };
  return o.state !== undefined ? { result, state: new RawJson(o.state), replayed: true } : { result, replayed: true };
}
