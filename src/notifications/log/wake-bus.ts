import { randomUUID } from 'node:crypto';
import { Logger, OnApplicationBootstrap, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type Redis from 'ioredis';

/** Between the keys of a batched message (the event feed's keys are tenant ids: no control characters). */
const BATCH_SEPARATOR = '\u0001';

/**
 * "Something may be new under key K": a doorbell, never a queue — what is new is always read from
 * the store by its number, so a lost or doubled wake costs latency, never a gap or a duplicate.
 * The notification feed (key: tenant, projection) and the event feed (key: tenant) are doorbells:
 * each extends this and says, in `woken` and `headMoved`, whom a ring reaches (given to it at
 * construction: the stream hub, the webhooks). One of the named asynchronous boundaries of an
 * event's path (ARCHITECTURE.md, "One event, hop by hop"): `publish` → a timer → `woken`.
 *
 * - `publish`: wakes are coalesced per key for `coalesceMs`, then `woken` here and, with Redis, on
 *   every other instance (one channel per bus; an instance ignores its own). With `batched`, the
 *   keys rung in one interval travel in one Redis message (the event feed, rung by every append of
 *   every tenant: one PUBLISH per interval and instance, not one per tenant).
 * - `startPolling`: without Redis, or while it is down, a write on another instance rings nothing
 *   here; so every `pollMs` the head of each key watched here (`watchedKeys`: the keys with a
 *   stream open on this instance) is read (one read per key, not per connection) and `headMoved`
 *   is called when it moved.
 */
export abstract class WakeBus implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger: Logger;
  private readonly instance = randomUUID();
  private readonly scheduled = new Set<string>();
  private pub?: Redis;
  private sub?: Redis;
  /** The head the poll last saw, per key watched here. */
  private readonly polledHead = new Map<string, number>();
  private pollTimer?: NodeJS.Timeout;
  private polling = false;

  protected constructor(
    private readonly channel: string,
    /** REDIS_URL (none: this instance's wakes only, the poll for the others') and STREAM_POLL_MS. */
    private readonly across: { redisUrl?: string; pollMs: number },
    private readonly coalesceMs = 2,
    private readonly batched = false,
  ) {
    this.logger = new Logger(`WakeBus ${channel}`);
  }

  async onModuleInit(): Promise<void> {
    if (this.across.redisUrl) await this.connect(this.across.redisUrl);
  }

  /** `pollMs` bounds how late a wake from elsewhere can be. */
  onApplicationBootstrap(): void {
    this.startPolling(this.across.pollMs);
  }

  onApplicationShutdown(): Promise<void> {
    return this.close();
  }

  /** A wake of the key, local or from another instance, once coalesced. */
  protected abstract woken(key: string[]): void;
  /** The poll saw the key's head move (or looked at it the first time): only this instance's streams need it. */
  protected abstract headMoved(key: string[]): void;
  /** The keys the poll reads: those with a stream open here. */
  protected abstract watchedKeys(): string[][];
  /** The newest number the store has for a key (a projection's last sequence, a tenant's head position). */
  protected abstract headOf(key: string[]): Promise<number>;

  async connect(redisUrl: string): Promise<void> {
    const { default: IORedis } = await import('ioredis');
    this.pub = new IORedis(redisUrl, { connectionName: `${this.channel}:pub`, maxRetriesPerRequest: 2 });
    this.sub = new IORedis(redisUrl, { connectionName: `${this.channel}:sub`, maxRetriesPerRequest: null });
    for (const c of [this.pub, this.sub]) c.on('error', (e) => this.logger.warn(`redis: ${e.message}`));
    this.sub.on('message', (_channel: string, message: string) => {
      const sep = message.indexOf('\u0000');
      if (sep < 0 || message.slice(0, sep) === this.instance) return;
      const rest = message.slice(sep + 1);
      for (const id of this.batched ? rest.split(BATCH_SEPARATOR) : [rest]) if (id) this.wakeLocal(id);
    });
    await this.sub.subscribe(this.channel);
  }

  startPolling(pollMs: number): void {
    if (this.pollTimer) return;
    this.pollTimer = setInterval(() => void this.poll(), pollMs);
    this.pollTimer.unref();
  }

  publish(key: string[]): void {
    const id = key.join('\u0000');
    if (this.scheduled.has(id)) return;
    this.scheduled.add(id);
    if (this.batched) {
      if (this.scheduled.size === 1) setTimeout(this.flush, this.coalesceMs);
      return;
    }
    setTimeout(() => {
      this.scheduled.delete(id);
      this.wakeLocal(id);
      this.pub?.publish(this.channel, `${this.instance}\u0000${id}`).catch(() => undefined);
    }, this.coalesceMs);
  }

  private readonly flush = (): void => {
    const ids = [...this.scheduled];
    this.scheduled.clear();
    for (const id of ids) this.wakeLocal(id);
    this.pub?.publish(this.channel, `${this.instance}\u0000${ids.join(BATCH_SEPARATOR)}`).catch(() => undefined);
  };

  async close(): Promise<void> {
    clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    await Promise.all([this.pub, this.sub].map((c) => c?.quit().catch(() => c.disconnect())));
  }

  private async poll(): Promise<void> {
    // A slow store must not stack polls: the next tick after this one ends reads again.
    if (this.polling) return;
    this.polling = true;
    try {
      const keys = this.watchedKeys();
      const ids = new Set(keys.map((key) => key.join('\u0000')));
      // A key no longer watched is forgotten: watched again, its first look wakes as the first did.
      for (const id of this.polledHead.keys()) if (!ids.has(id)) this.polledHead.delete(id);
      for (const key of keys) {
        const id = key.join('\u0000');
        let now: number;
        try {
          now = await this.headOf(key);
        } catch (e) {
          // The streams read the same store and fail on their own; the next tick tries again.
          this.logger.debug(`head poll: ${e instanceof Error ? e.message : String(e)}`);
          continue;
        }
        const before = this.polledHead.get(id);
        this.polledHead.set(id, now);
        // Woken after the read: a cursor woken now reads at least up to `now`. The first look at a
        // key wakes too (cheap: a cursor at the head reads one empty page).
        if (before === undefined || now > before) this.headMoved(key);
      }
    } finally {
      this.polling = false;
    }
  }

  private wakeLocal(id: string): void {
    this.woken(id.split('\u0000'));
  }
}
