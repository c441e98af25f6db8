import { Injectable, Logger } from '@nestjs/common';
import { SerialRunner } from '../common/serial-runner';
import { EventWebhookDispatcherOptions, EventWebhookRound } from './event-webhook-round';

/**
 * The event webhooks' asynchronous boundary (ARCHITECTURE.md, "One event, hop by hop"): a wake runs
 * EventWebhookRound.run soon, one round at a time (a wake during a round makes exactly one more);
 * the poll timer (pollMs) has the round look at whether any webhook is active, and wakes it.
 */
@Injectable()
export class EventDeliveryTick {
  private readonly logger = new Logger('EventWebhookDispatcher');
  private timer?: NodeJS.Timeout;
  private readonly rounds = new SerialRunner(
    () => this.round.run(this),
    (e) => this.logger.warn(`event webhook tick failed: ${e instanceof Error ? e.message : e}`),
  );

  constructor(
    private readonly round: EventWebhookRound,
    private readonly options: EventWebhookDispatcherOptions,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.poll(), this.options.pollMs);
    this.timer.unref();
    this.poll();
  }

  wake(): void {
    this.rounds.wake();
  }

  /** Every `pollMs`: a round (appends on other instances, due retries, lapsed claims) and a look at whether any webhook is active. */
  private poll(): void {
    if (this.round.closing) return;
    this.round.checkActive();
    this.rounds.wake();
  }

  /** No more rounds; resolves when the one under way has finished. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.rounds.stop();
  }
}
