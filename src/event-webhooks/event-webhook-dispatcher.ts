import { Injectable } from '@nestjs/common';
import { EventWebhooksAppended } from '../events/append-committed.port';
import { EventDeliveryTick } from './event-delivery-tick';
import { EventWebhookRound } from './event-webhook-round';

/**
 * Delivers event webhooks (EventWebhookRound: per subscription one event at a time, in position
 * order, claimed in the store, every write fenced by owner + cursor). Bound to the append commit
 * (EventWebhooksAppended): an append on this instance wakes the EventDeliveryTick, which runs
 * the rounds; so does the tick's poll every `pollMs`.
 */
@Injectable()
export class EventWebhookDispatcher implements EventWebhooksAppended {
  constructor(
    private readonly tick: EventDeliveryTick,
    private readonly round: EventWebhookRound,
  ) {}

  /** This process's claims: unique per process, readable in the store by an operator. */
  get owner(): string {
    return this.round.owner;
  }

  start(): void {
    this.tick.start();
  }

  /** Lets go of every claim once its attempt under way has ended, so another instance takes over at once. */
  async close(): Promise<void> {
    this.round.stop();
    await this.tick.close();
    await this.round.releaseAll();
  }

  /** EventWebhooksAppended: an append on this instance. The round is one statement, and wakes coalesce while one runs. */
  appended(): void {
    if (this.round.wantsAppends) this.tick.wake();
  }

  /** Something may be due (a webhook made, replayed or resumed here). */
  wake(): void {
    this.round.activate();
    if (!this.round.closing) this.tick.wake();
  }
}
