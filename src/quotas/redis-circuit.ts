import { Logger } from '@nestjs/common';

/**
 * Redis holds no truth for quotas, so when it fails the limits fall back to this instance's own
 * counts rather than refusing or stalling requests. After a failure Redis is left alone for
 * `pauseMs` (no timeout paid per request meanwhile), then tried again.
 */
export class RedisCircuit {
  private readonly logger = new Logger('Quotas');
  private openUntil = 0;
  private lastWarning = 0;

  constructor(
    private readonly pauseMs = 1_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether Redis is worth asking now. */
  closed(): boolean {
    return this.now() >= this.openUntil;
  }

  failed(err: unknown): void {
    const now = this.now();
    this.openUntil = now + this.pauseMs;
    // One line per 30 s: an outage must show in the logs without flooding them at thousands of requests a second.
    if (now - this.lastWarning >= 30_000) {
      this.lastWarning = now;
      this.logger.warn(
        `redis unavailable for quotas (${err instanceof Error ? err.message : String(err)}): limits are counted per instance until it is back`,
      );
    }
  }
}
