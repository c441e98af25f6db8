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

  /**
   * A multi-aggregate transaction's members (transaction-requests.ts): the stateful stage when a
   * reducer is bound to any member's type, else group commit, all in one commit; then the committed
   * ports once, at the transaction's last position. One outcome per member, in order.
   */
  async appendTransaction(members: AppendRequest[]): Promise<AppendOutcomeWithState[]> {
    const handled = await this.stateful.appendTransaction(members);
    const outcomes = handled ?? (await this.batcher.appendTransaction(members)).map((result) => ({ result }));
    const replay = outcomes[0].result.replay;
    if (replay) return replayedTransaction(outcomes, replay.outcome);
    const first = members[0].idempotency?.key;
    if (this.killAfterCommitKey !== undefined && first === this.killAfterCommitKey) process.kill(process.pid, 'SIGKILL');
    const positions = outcomes.flatMap((o) => o.result.events.map((e) => e.position));
    const position = Math.max(...positions);
    const traced = appendTrace(Math.min(...positions));
    this.committed.appended(members[0].tenantId, position, traced);
    this.hooks.appended(members[0].tenantId, position, traced);
    this.live.appended(members[0].tenantId, position);
    return outcomes;
  }
}

/**
 * A keyed transaction's first answer again. The states of its members were remembered with the key
 * on the first member (`{members: [RememberedOutcome, ...]}`, AggregateStateKeeper writes it).
 */
function replayedTransaction(outcomes: AppendOutcomeWithState[], remembered: string | null): AppendOutcomeWithState[] {
  const members = remembered === null ? [] : ((JSON.parse(remembered) as { members?: (RememberedOutcome | null)[] }).members ?? []);
  return outcomes.map((o, i) => replayedOutcome(o.result, members[i] ? JSON.stringify(members[i]) : null));
}

/** The first answer again: its events as stored, and the state (or state error) remembered with the key. */
function replayedOutcome(result: AppendOutcomeWithState['result'], remembered: string | null): AppendOutcomeWithState {
  const o = remembered === null ? {} : (JSON.parse(remembered) as RememberedOutcome);
  if (o.stateError) return { result, stateError: o.stateError, replayed: true };
  return o.state !== undefined ? { result, state: new RawJson(o.state), replayed: true } : { result, replayed: true };
}
