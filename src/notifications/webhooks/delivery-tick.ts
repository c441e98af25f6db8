import { Injectable, Logger } from '@nestjs/common';
import { SerialRunner } from '../../common/serial-runner';
import { WebhookDeliveryRound } from './webhook-delivery-round';
import { WebhookDispatcherOptions } from './webhook-dispatcher-options';

/**
 * The webhook deliveries' asynchronous boundary (ARCHITECTURE.md, "One event, hop by hop"): a wake
 * runs WebhookDeliveryRound.run soon, one round at a time (a wake during a round makes exactly one
 * more); the poll timer (pollMs) wakes it too and has the round look at every backlog in the
 * store, for wake-ups lost elsewhere.
 */
@Injectable()
export class DeliveryTick {
  private readonly logger = new Logger('WebhookDispatcher');
  private timer?: NodeJS.Timeout;
  private readonly rounds = new SerialRunner(
    () => this.round.run(this),
    (e) => this.logger.warn(`webhook tick failed: ${e instanceof Error ? e.message : e}`),
  );

  constructor(
    private readonly round: WebhookDeliveryRound,
    private readonly options: WebhookDispatcherOptions,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.round.scanAllBacklogs();
      this.wake();
    }, this.options.pollMs);
    this.timer.unref();
    this.wake();
  }

  /** New notifications, a finished attempt or the timer: look for work now. */
  wake(): void {
    this.rounds.wake();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.rounds.stop();
  }
}
