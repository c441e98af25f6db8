import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';

/** Between the keys of a batched message (the event feed's keys are tenant ids: no control characters). */
const BATCH_SEPARATOR = '\u0001';

/** The newest number the store has for a key (a projection's last sequence, a tenant's head position). */
export type HeadOf = (key: string[]) => Promise<number>;

/**
 * "Something may be new under key K": a doorbell, never a queue — what is new is always read from
 * the store by its number, so a lost or doubled wake costs latency, never a gap or a duplicate.
 * Shared by the notification feed (key: tenant, projection) and the event feed (key: tenant).
 *
 * - `publish`: wakes are coalesced per key for COALESCE_MS, then ring the local subscribers and,
 *   with Redis, every other instance's (one channel per bus; an instance ignores its own). With
 *   `batched`, the keys rung in one interval travel in one Redis message (the event feed, rung by
 *   every append of every tenant: one PUBLISH per interval and instance, not one per tenant).
 * - `startPolling`: without Redis, or while it is down, a write on another instance rings nothing
 *   here; so every `pollMs` the head of each key subscribed here is read (one read per key, not per
 *   connection) and its subscribers are woken when it moved.
 */
export class WakeBus {
  private readonly logger: Logger;
  private readonly byKey = new Map<string, Set<() => void>>();
  private readonly instance = randomUUID();
  private readonly scheduled = new Set<string>();
  private pub?: Redis;
  private sub?: Redis;
  /** The head the poll last saw, per key with local subscribers. */
  private readonly polledHead = new Map<string, number>();
  private pollTimer?: NodeJS.Timeout;
  private polling = false;

  constructor(
    private readonly channel: string,
    /** Also told of every wake of a key, local or from another instance (the webhooks of a projection). */
    private readonly onWake: (key: string[]) => void = () => undefined,
    private readonly coalesceMs = 2,
    private readonly batched = false,
  ) {
    this.logger = new Logger(`WakeBus ${channel}`);
  }

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

  startPolling(head: HeadOf, pollMs: number): void {
    if (this.pollTimer) return;
    this.pollTimer = setInterval(() => void this.poll(head), pollMs);
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

  subscribe(key: string[], wake: () => void): () => void {
    const id = key.join('\u0000');
    let set = this.byKey.get(id);
    if (!set) this.byKey.set(id, (set = new Set()));
    set.add(wake);
    return () => {
      set!.delete(wake);
      if (set!.size === 0 && this.byKey.get(id) === set) {
        this.byKey.delete(id);
        this.polledHead.delete(id);
      }
    };
  }

  async close(): Promise<void> {
    clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    await Promise.all([this.pub, this.sub].map((c) => c?.quit().catch(() => c.disconnect())));
  }

  private async poll(head: HeadOf): Promise<void> {
    // A slow store must not stack polls: the next tick after this one ends reads again.
    if (this.polling) return;
    this.polling = true;
    try {
      for (const id of [...this.byKey.keys()]) {
        let now: number;
        try {
          now = await head(id.split('\u0000'));
        } catch (e) {
          // The streams read the same store and fail on their own; the next tick tries again.
          this.logger.debug(`head poll: ${e instanceof Error ? e.message : String(e)}`);
          continue;
        }
        const before = this.polledHead.get(id);
        if (!this.byKey.has(id)) continue;
        this.polledHead.set(id, now);
        // Woken after the read: a cursor woken now reads at least up to `now`. The first look at a
        // key wakes too (cheap: a cursor at the head reads one empty page).
        if (before === undefined || now > before) for (const w of this.byKey.get(id) ?? []) w();
      }
    } finally {
      this.polling = false;
    }
  }

  private wakeLocal(id: string): void {
    for (const w of this.byKey.get(id) ?? []) w();
    this.onWake(id.split('\u0000'));
  }
}
