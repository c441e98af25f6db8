import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { IdempotencyKeyRepository } from '../store/idempotency-key.port';

/** Rows deleted per statement: bounded, so that a sweep after a long pause holds no lock for long. */
const CHUNK = 5_000;

/**
 * Deletes expired idempotency keys every `sweepMs`, on every instance (deletes of one row by two
 * instances are harmless). Only space: appends already treat a key older than `keepMs` as unknown,
 * so a key is forgotten on time even when the sweep is late.
 */
@Injectable()
export class IdempotencyKeySweep {
  private readonly logger = new Logger('IdempotencyKeySweep');
  private timer?: NodeJS.Timeout;
  private running = false;

  private readonly keepMs: number;
  private readonly sweepMs: number;

  constructor(
    private readonly repo: IdempotencyKeyRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.keepMs = config.idempotency.keepMs;
    this.sweepMs = config.idempotency.sweepMs;
  }

  start(): void {
    this.timer = setInterval(() => void this.sweep(), this.sweepMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Answers how many keys went. */
  async sweep(now = Date.now()): Promise<number> {
    if (this.running) return 0;
    this.running = true;
    let deleted = 0;
    try {
      for (let n = CHUNK; n === CHUNK; deleted += n) n = await this.repo.deleteExpired(now - this.keepMs, CHUNK);
    } catch (e) {
      this.logger.warn(`idempotency key sweep failed: ${e instanceof Error ? e.message : e}`);
    } finally {
      this.running = false;
    }
    return deleted;
  }
}
